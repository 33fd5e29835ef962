"""Scenarios F (docs/tools.md "read_file" to docs/tools.md "write_file"): read_file, edit_file and write_file on real files."""

from __future__ import annotations

import os
import re

import pytest

from tests.support.env import final, make_env, run_call, tool_entry


@pytest.fixture
def ws(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    return workspace


@pytest.fixture
def env(ws):
    environment = make_env(ws, tool_entry("read_file"), tool_entry("edit_file"), tool_entry("write_file"))
    yield environment
    environment.dispose()


async def call(env, name, **args):
    return final(await run_call(env, name, args))


# --- read_file ------------------------------------------------------------------------------


async def test_read_file_cat_n_style(env, ws):
    (ws / "abc.txt").write_text("alpha\nbeta\ngamma\n")
    result = await call(env, "read_file", file_path="abc.txt")
    assert result.output.split("\n") == ["     1\talpha", "     2\tbeta", "     3\tgamma"]
    assert result.stop_reason == "completed"


async def test_read_file_windowing(env, ws):
    (ws / "ten.txt").write_text("".join(f"line-{i}\n" for i in range(1, 11)))
    for offset, limit in ((3, 4), ("3", "4")):
        rows = (await call(env, "read_file", file_path="ten.txt", offset=offset, limit=limit)).output.split(
            "\n"
        )
        assert rows[0] == "     3\tline-3" and rows[3] == "     6\tline-6"
        assert rows[4] == "[file has 10 lines total; showing 3-6 — call again with offset to continue]"
    (ws / "many.txt").write_text("".join(f"{i}\n" for i in range(1, 2006)))
    result = await call(env, "read_file", file_path="many.txt")
    assert "[file has 2005 lines total; showing 1-2000" in result.output


async def test_read_file_argument_errors(env, ws):
    (ws / "a.txt").write_text("a\n")
    assert (await call(env, "read_file")).output == 'Missing required argument "file_path" for read_file.'
    bad = await call(env, "read_file", file_path="a.txt", offset="abc")
    assert bad.output == 'Invalid "offset": expected a number (got "abc").' and bad.stop_reason == "failed"
    bad = await call(env, "read_file", file_path="a.txt", limit=0)
    assert bad.output == 'Invalid "limit": expected a positive number (got 0).'
    past = await call(env, "read_file", file_path="a.txt", offset=5)
    assert past.output == 'Offset 5 is past the end of "a.txt" (1 line total).'
    (ws / "empty.txt").write_text("")
    empty = await call(env, "read_file", file_path="empty.txt")
    assert empty.output == '"empty.txt" is an empty file (0 lines).' and empty.stop_reason == "completed"
    (ws / "bin.dat").write_bytes(b"ab\0cd")
    assert (
        "looks like a binary file (contains NUL bytes)"
        in (await call(env, "read_file", file_path="bin.dat")).output
    )
    (ws / "sub").mkdir()
    directory = await call(env, "read_file", file_path="sub")
    assert directory.output == 'Cannot read "sub": it is a directory. Pass the path of a file inside it.'


async def test_read_file_missing_path_hints(env, ws):
    missing = await call(env, "read_file", file_path="missing.txt")
    assert missing.stop_reason == "failed"
    assert "File not found" in missing.output and "Absolute paths are supported" in missing.output
    assert f'The directory "{ws}" exists but has no entry "missing.txt".' in missing.output
    assert missing.output.endswith("It is empty.")
    (ws / "agent_state").mkdir()
    (ws / "notes.txt").write_text("n")
    hint = await call(env, "read_file", file_path=f"{ws}/AGENTS.md")
    assert hint.output.endswith("It contains: agent_state/, notes.txt.")
    deep = await call(env, "read_file", file_path=f"{ws}/nope/deep/file.txt")
    assert f'The directory "{ws}" exists but has no entry "nope".' in deep.output
    (ws / "a.txt").write_text("a")
    through_file = await call(env, "read_file", file_path=f"{ws}/a.txt/inner.txt")
    assert f'Note: "{ws}/a.txt" exists but is a file, not a directory.' in through_file.output
    for i in range(7):
        (ws / f"extra{i}.txt").write_text("x")
    crowded = await call(env, "read_file", file_path="zzz.txt")
    assert crowded.output.endswith("(+2 more).")


async def test_read_file_secret_guard(env, ws):
    secret = "TOP-SECRET-VALUE"
    (ws / ".vault.toml").write_text(secret)
    (ws / "sub").mkdir()
    (ws / "sub" / ".project_config.toml").write_text(secret)
    (ws / "upper").mkdir()
    (ws / "upper" / ".VAULT.TOML").write_text(secret)
    os.symlink(ws / ".vault.toml", ws / "notes.txt")
    (ws / "plain.txt").write_text("hello")
    os.symlink(ws / "plain.txt", ws / "alias.txt")
    (ws / "other").mkdir()
    os.symlink(ws / "plain.txt", ws / "other" / ".project_config.toml")
    for path in (
        ".vault.toml",
        "sub/.project_config.toml",
        "upper/.VAULT.TOML",
        "notes.txt",
        "other/.project_config.toml",
    ):
        result = await call(env, "read_file", file_path=path)
        assert result.stop_reason == "failed" and "Refusing to read" in result.output
        assert secret not in result.output
    refused = await call(env, "read_file", file_path=".vault.toml")
    assert refused.output == (
        'Refusing to read ".vault.toml": .vault.toml holds the user\'s secrets and must never enter the conversation.'
    )
    assert "hello" in (await call(env, "read_file", file_path="alias.txt")).output


async def test_read_file_self_budget(ws):
    env = make_env(ws, tool_entry("read_file", max_output_length=300))
    (ws / "ten.txt").write_text("".join(f"line-{i}-" + "y" * 30 + "\n" for i in range(1, 11)))
    result = await call(env, "read_file", file_path="ten.txt")
    assert len(result.output) <= 300
    assert re.search(
        r"\[file has 10 lines total; showing 1-\d+ \(output limit reached\) — call again with offset to continue\]",
        result.output,
    )
    assert "line-10" not in result.output
    env.dispose()


async def test_read_file_scan_cap(env, ws):
    cap = 8 * 1024 * 1024
    (ws / "huge-line.txt").write_bytes(b"x" * (cap + 1024))
    huge = await call(env, "read_file", file_path="huge-line.txt")
    assert huge.stop_reason == "failed"
    assert "Stopped after scanning 8 MB" in huge.output and "sed -n" in huge.output
    (ws / "just-below.txt").write_bytes(b"x" * (cap - 1))
    below = await call(env, "read_file", file_path="just-below.txt")
    assert below.stop_reason == "completed" and "[line truncated]" in below.output
    assert "file has more than" not in below.output
    (ws / "many.txt").write_bytes(b"x\n" * (cap // 2 + 1000))
    many = await call(env, "read_file", file_path="many.txt")
    assert re.search(
        r"\[file has more than \d+ lines; showing 1-2000 — call again with offset to continue\]", many.output
    )


async def test_read_file_crlf_and_long_lines(env, ws):
    (ws / "crlf.txt").write_bytes(b"one\r\ntwo\r\n")
    result = await call(env, "read_file", file_path="crlf.txt")
    assert result.output == "     1\tone\n     2\ttwo\n(file uses CRLF line endings)"
    (ws / "long.txt").write_text("z" * 2500 + "\n")
    long = await call(env, "read_file", file_path="long.txt")
    assert long.output == "     1\t" + "z" * 2000 + "… [line truncated]"


# --- edit_file ------------------------------------------------------------------------------


async def test_edit_file_on_bytes_that_are_not_utf8_keeps_them_and_its_output_encodes(env, ws):
    """A file with a stray Latin-1 byte: the edit keeps the byte on disk, and the output the model
    gets is valid UTF-8 (a lone surrogate in it made every later model request fail)."""
    (ws / "latin.txt").write_bytes(b"caf\xe9 = 1\nvalue = 2\n")
    result = await call(env, "edit_file", file_path="latin.txt", old_string="value = 2", new_string="value = 3")
    assert (ws / "latin.txt").read_bytes() == b"caf\xe9 = 1\nvalue = 3\n"
    result.output.encode("utf-8")  # raises on a lone surrogate
    assert "caf\ufffd = 1" in result.output and "+value = 3" in result.output


async def test_edit_file_exact_outputs(env, ws):
    (ws / "src.ts").write_text("const a = 1;\nconst b = 2;\nconst c = 3;\n")
    result = await call(
        env, "edit_file", file_path="src.ts", old_string="const b = 2;", new_string="const b = 20;"
    )
    assert result.output == (
        'Replaced 1 occurrence in "src.ts".\n@@ -1,3 +1,3 @@\n const a = 1;\n-const b = 2;\n+const b = 20;\n const c = 3;'
    )
    assert (ws / "src.ts").read_text() == "const a = 1;\nconst b = 20;\nconst c = 3;\n"
    (ws / "multi.txt").write_text("foo bar foo baz foo\n")
    multi = await call(
        env, "edit_file", file_path="multi.txt", old_string="foo", new_string="qux", replace_all=True
    )
    assert multi.output == (
        'Replaced 3 occurrences in "multi.txt".\n@@ -1,1 +1,1 @@\n-foo bar foo baz foo\n+qux bar qux baz qux'
    )
    (ws / "erase.txt").write_text("abc")
    erase = await call(env, "edit_file", file_path="erase.txt", old_string="abc", new_string="")
    assert erase.output == 'Replaced 1 occurrence in "erase.txt".\n@@ -1,1 +0,0 @@\n-abc'
    assert (ws / "erase.txt").read_text() == ""


async def test_edit_file_validation_texts(env, ws):
    (ws / "f.txt").write_text("one two two\r\nthree\r\n")
    cases = [
        ({"old_string": "a", "new_string": "b"}, 'Missing required argument "file_path" for edit_file.'),
        ({"file_path": "f.txt", "new_string": "b"}, 'Missing required argument "old_string" for edit_file.'),
        (
            {"file_path": "f.txt", "old_string": "", "new_string": "b"},
            "old_string must not be empty — edit_file replaces existing text. To create a file or rewrite it "
            "wholesale, use write_file.",
        ),
        (
            {"file_path": "f.txt", "old_string": "one"},
            'Missing required argument "new_string" for edit_file.',
        ),
        (
            {"file_path": "f.txt", "old_string": "one", "new_string": "one"},
            "old_string and new_string are identical — nothing to change. Make new_string the desired replacement text.",
        ),
        (
            {"file_path": "f.txt", "old_string": "two", "new_string": "2"},
            'old_string occurs 2 times in "f.txt". Add surrounding context to make it unique, or set replace_all to '
            "true to replace every occurrence.",
        ),
        (
            {"file_path": "f.txt", "old_string": "nine", "new_string": "9"},
            'old_string not found in "f.txt". Make sure it matches the file content exactly, including whitespace '
            "and indentation. Note: the file uses CRLF (\\r\\n) line endings — a multi-line old_string must include "
            "the \\r characters.",
        ),
    ]
    for args, expected in cases:
        result = await call(env, "edit_file", **args)
        assert (result.output, result.stop_reason) == (expected, "failed")
    (ws / "d").mkdir()
    assert (await call(env, "edit_file", file_path="d", old_string="a", new_string="b")).output == (
        'Cannot edit "d": it is a directory.'
    )
    missing = await call(env, "edit_file", file_path="gone.txt", old_string="a", new_string="b")
    assert missing.output.startswith(
        'File not found: "gone.txt". edit_file only edits existing files — check the path (absolute paths are '
        "supported), or use write_file to create it. The directory"
    )


async def test_edit_file_caps_hunks_and_budget(env, ws):
    lines = []
    for i in range(8):
        lines += ["target"] + [f"filler-{i}-{k}" for k in range(10)]
    (ws / "cap.txt").write_text("\n".join(lines) + "\n")
    result = await call(
        env, "edit_file", file_path="cap.txt", old_string="target", new_string="hit", replace_all=True
    )
    assert result.output.startswith('Replaced 8 occurrences in "cap.txt".')
    assert result.output.count("@@ ") == 5
    assert result.output.endswith("…and 3 more replacements")
    tiny_env = make_env(ws, tool_entry("edit_file", max_output_length=150))
    (ws / "tiny.txt").write_text("a\nb\na\n")
    tiny = final(
        await run_call(
            tiny_env,
            "edit_file",
            {"file_path": "tiny.txt", "old_string": "a", "new_string": "x" * 200, "replace_all": True},
        )
    )
    assert len(tiny.output) <= 150 and "@@" not in tiny.output
    assert (
        'Replaced 2 occurrences in "tiny.txt".' in tiny.output and "…and 2 more replacements" in tiny.output
    )
    tiny_env.dispose()


async def test_edit_file_crlf_hygiene_atomic_and_mode(env, ws):
    path = ws / "crlf.txt"
    path.write_bytes(b"alpha\r\nbeta\r\n")
    os.chmod(path, 0o640)
    result = await call(env, "edit_file", file_path="crlf.txt", old_string="alpha", new_string="gamma")
    assert "-alpha" in result.output and "+gamma" in result.output and " beta" in result.output
    assert "\r" not in result.output
    assert path.read_bytes() == b"gamma\r\nbeta\r\n"
    assert oct(os.stat(path).st_mode & 0o777) == "0o640"
    assert not [n for n in os.listdir(ws) if ".tmp-" in n]


# --- write_file -----------------------------------------------------------------------------


async def test_write_file_outputs(env, ws):
    created = await call(env, "write_file", file_path="out.txt", content="one\ntwo\n")
    assert created.output == 'Created "out.txt" (2 lines, 8 bytes).'
    deep = await call(env, "write_file", file_path="a/b/c/deep.txt", content="x")
    assert deep.output == 'Created "a/b/c/deep.txt" (1 line, 1 byte).' and (ws / "a/b/c/deep.txt").exists()
    (ws / "exists.txt").write_text("old\n")
    assert (await call(env, "write_file", file_path="exists.txt", content="new\n")).output.startswith(
        'Overwrote "exists.txt"'
    )
    assert (await call(env, "write_file", file_path="empty.txt", content="")).output == (
        'Created "empty.txt" (0 lines, 0 bytes).'
    )
    (ws / "dir").mkdir()
    directory = await call(env, "write_file", file_path="dir", content="x")
    assert directory.stop_reason == "failed" and directory.output == 'Cannot write "dir": it is a directory.'
    (ws / "plain.txt").write_text("p")
    blocked = await call(env, "write_file", file_path="plain.txt/child.txt", content="x")
    assert blocked.stop_reason == "failed" and blocked.output.startswith(
        'Failed to write "plain.txt/child.txt": '
    )
    missing = await call(env, "write_file", file_path="m.txt")
    assert (
        missing.stop_reason == "failed"
        and missing.output == 'Missing required argument "content" for write_file.'
    )


async def test_write_file_overwrite_diffs(env, ws):
    (ws / "d.txt").write_text("one\ntwo\nthree\n")
    diff = await call(env, "write_file", file_path="d.txt", content="one\nTWO\nthree\n")
    assert diff.output == 'Overwrote "d.txt" (3 lines, 14 bytes).\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three'
    same = await call(env, "write_file", file_path="d.txt", content="one\nTWO\nthree\n")
    assert same.output == 'Overwrote "d.txt" (3 lines, 14 bytes).\n(content unchanged)'
    (ws / "big.txt").write_text("".join(f"old {i}\n" for i in range(200)))
    big = await call(
        env, "write_file", file_path="big.txt", content="".join(f"new {i}\n" for i in range(200))
    )
    assert big.output.endswith("\n+200/−200 lines vs the previous content (diff too large to show)")
    created = await call(env, "write_file", file_path="fresh.txt", content="a\nb\n")
    assert "@@" not in created.output
    secret = ws / "secret.txt"
    secret.write_text("s")
    os.chmod(secret, 0o600)
    await call(env, "write_file", file_path="secret.txt", content="t")
    assert oct(os.stat(secret).st_mode & 0o777) == "0o600"
