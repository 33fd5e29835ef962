"""The missing-path hint as the reference harness gives it (issue 17 point 9): a missing
top-level directory is hinted too, equally ranked names are ordered case-insensitively, and
only real directories get a trailing "/" (a symlink to a directory does not)."""

from __future__ import annotations

import os
from pathlib import Path

from penguin_jupyter.environment.tools.path_hint import missing_path_hint


def test_a_missing_top_level_directory_is_hinted_from_the_root() -> None:
    name = "no-such-top-level-dir-penguin"
    assert not os.path.lexists(f"/{name}")
    hint = missing_path_hint(f"/{name}/inner/file.txt")
    assert hint.startswith(f' The directory "/" exists but has no entry "{name}". It contains: ')


def test_equally_ranked_names_are_sorted_case_insensitively(tmp_path: Path) -> None:
    for name in ("beta.txt", "Alpha.txt", "gamma.txt", "Delta.txt"):
        (tmp_path / name).write_text("x")
    hint = missing_path_hint(str(tmp_path / "zzz.txt"))  # no shared prefix: all rank equal
    assert hint.endswith("It contains: Alpha.txt, beta.txt, Delta.txt, gamma.txt.")


def test_shared_prefix_ranks_first_ignoring_case(tmp_path: Path) -> None:
    for name in ("README.md", "agent_state", "AGENTS.md", "notes.txt"):
        (tmp_path / name).write_text("x")
    hint = missing_path_hint(str(tmp_path / "agents.json"))
    assert hint.endswith("It contains: AGENTS.md, agent_state, notes.txt, README.md.")


def test_a_symlink_to_a_directory_gets_no_trailing_slash(tmp_path: Path) -> None:
    (tmp_path / "real_dir").mkdir()
    (tmp_path / "link_dir").symlink_to(tmp_path / "real_dir", target_is_directory=True)
    hint = missing_path_hint(str(tmp_path / "missing"))
    assert hint.endswith("It contains: link_dir, real_dir/.")


def test_a_dangling_symlink_ancestor_keeps_the_walk_going(tmp_path: Path) -> None:
    (tmp_path / "gone").symlink_to(tmp_path / "nowhere")
    hint = missing_path_hint(str(tmp_path / "gone" / "file.txt"))
    assert hint == f' The directory "{tmp_path}" exists but has no entry "gone". It contains: gone.'


def test_a_file_in_the_way_is_named(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a")
    hint = missing_path_hint(str(tmp_path / "a.txt" / "inner.txt"))
    assert hint == f' Note: "{tmp_path / "a.txt"}" exists but is a file, not a directory.'
