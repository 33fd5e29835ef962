"""The labextension is built by the wheel/editable build and JupyterLab lists it enabled.

Real builds: a copy of the source tree (its node_modules symlinked to the repo's, so no
download) goes through `pip wheel` / `pip install -e` with the hatch-jupyter-builder hook, is
installed into a private prefix, and `jupyter labextension list` is asked about it with
JUPYTER_PATH pointing there. A last test checks the environment the suite runs in, when
penguin_jupyter is installed there (scripts/setup.sh installs it editable).
"""

from __future__ import annotations

import importlib
import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.transcript import REPO

pytestmark = pytest.mark.install  # builds the package: not part of the lowest-versions pass (scripts/test.sh)

EXT_NAME = "penguin-jupyter"
ENABLED_LINE = re.compile(r"penguin-jupyter v\d+\.\d+\.\d+\S* enabled OK \(python, penguin_jupyter\)")
ANSI = re.compile(r"\x1b\[[0-9;]*m")
# Captured at import, before conftest gives each test a private HOME: the yarn cache that the
# project's own `jlpm install` filled, so the copied tree installs offline.
YARN_GLOBAL = Path.home() / ".yarn" / "berry"
SKIP_PARTS = (
    "labextension/node_modules/",
    "labextension/lib/",
    "labextension/.yarn/",
    "penguin_jupyter/labextension/",
)


def _build_tools_or_skip() -> None:
    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    if not (YARN_GLOBAL / "cache").is_dir():
        pytest.skip(f"no yarn cache in {YARN_GLOBAL}: run `jlpm install` in labextension/ first")
    for module in ("hatchling", "hatch_jupyter_builder", "jupyter_builder", "editables"):
        try:
            importlib.import_module(module)
        except ImportError:
            pytest.skip(f"{module} is not installed in this environment")
    if not (REPO / "labextension" / "node_modules").is_dir():
        pytest.skip("labextension/node_modules is missing: run `jlpm install` in labextension/")


def source_copy(dest: Path) -> Path:
    """The tracked + untracked (not ignored) files of the repo, node_modules symlinked."""
    listed = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    for rel in listed:
        if rel.startswith(SKIP_PARTS) or not (REPO / rel).is_file():
            continue
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / rel, target)
    (dest / "labextension" / "node_modules").symlink_to(REPO / "labextension" / "node_modules")
    state = REPO / "labextension" / ".yarn" / "install-state.gz"
    if state.is_file():  # lets `jlpm install` see the shared node_modules as up to date (no relinking)
        (dest / "labextension" / ".yarn").mkdir()
        shutil.copy2(state, dest / "labextension" / ".yarn" / "install-state.gz")
    if not (dest / "README.md").exists():  # pyproject names README.md; the copy needs one to build
        (dest / "README.md").write_text("# penguin_jupyter\n")
    return dest


def labextension_list(jupyter_path: Path | None) -> str:
    env = dict(os.environ)
    if jupyter_path is not None:
        env["JUPYTER_PATH"] = str(jupyter_path)
    done = subprocess.run(
        [sys.executable, "-m", "jupyter", "labextension", "list"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )
    return ANSI.sub("", done.stdout + done.stderr)


def pip(*args: str, cwd: Path) -> None:
    """pip with yarn pointed at the warmed cache and forbidden to touch the network."""
    env = {**os.environ, "YARN_GLOBAL_FOLDER": str(YARN_GLOBAL), "YARN_ENABLE_NETWORK": "0"}
    # The build runs `jlpm` from this interpreter's environment, activated or not.
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    done = subprocess.run(
        [sys.executable, "-m", "pip", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=400,
        check=False,
        env=env,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


def assert_built_extension(ext_dir: Path) -> None:
    package = json.loads((ext_dir / "package.json").read_text())
    assert package["name"] == EXT_NAME
    build = package["jupyterlab"]["_build"]
    assert build["mimeExtension"] == "./mimeExtension"
    assert build["extension"] == "./extension"
    assert (ext_dir / build["load"]).is_file()
    assert (ext_dir / "static" / "style.js").is_file()
    assert json.loads((ext_dir / "install.json").read_text())["packageName"] == "penguin_jupyter"


def assert_ships_the_ask_schema(ext_dir: Path) -> None:
    """Ask penguin's cell toolbar and context menu entries come from its settings schema."""
    schema = json.loads((ext_dir / "schemas" / EXT_NAME / "ask.json").read_text())
    assert schema["jupyter.lab.menus"]["context"][0]["command"] == "penguin:ask-about-error"


def test_wheel_ships_the_labextension_and_jupyter_lists_it_enabled(tmp_path):
    _build_tools_or_skip()
    src = source_copy(tmp_path / "src")
    pip("wheel", "--no-deps", "--no-build-isolation", "-w", str(tmp_path / "dist"), str(src), cwd=tmp_path)
    (wheel,) = (tmp_path / "dist").glob("penguin_jupyter-*.whl")
    prefix = tmp_path / "prefix"
    pip(
        "install",
        "--no-deps",
        "--ignore-installed",
        "--no-compile",
        "--prefix",
        str(prefix),
        str(wheel),
        cwd=tmp_path,
    )
    ext_dir = prefix / "share" / "jupyter" / "labextensions" / EXT_NAME
    assert_built_extension(ext_dir)
    assert_ships_the_ask_schema(ext_dir)
    assert not list(prefix.glob("lib/python*/site-packages/penguin_jupyter/labextension"))
    assert ENABLED_LINE.search(labextension_list(prefix / "share" / "jupyter")), labextension_list(
        prefix / "share" / "jupyter"
    )


def test_editable_install_builds_and_lists_the_labextension(tmp_path):
    _build_tools_or_skip()
    src = source_copy(tmp_path / "src")
    prefix = tmp_path / "prefix"
    pip(
        "install",
        "--no-deps",
        "--ignore-installed",
        "--no-build-isolation",
        "--prefix",
        str(prefix),
        "-e",
        str(src),
        cwd=tmp_path,
    )
    assert (src / "penguin_jupyter" / "labextension" / "package.json").is_file()
    assert_built_extension(prefix / "share" / "jupyter" / "labextensions" / EXT_NAME)
    listing = labextension_list(prefix / "share" / "jupyter")
    assert ENABLED_LINE.search(listing), listing


def test_this_environment_has_the_labextension_enabled():
    try:
        importlib.metadata.distribution("penguin_jupyter")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("penguin_jupyter is not pip-installed in this environment (scripts/setup.sh installs it)")
    listing = labextension_list(None)
    assert ENABLED_LINE.search(listing), listing
    from jupyter_core.paths import jupyter_path

    found = [Path(p) / EXT_NAME for p in jupyter_path("labextensions") if (Path(p) / EXT_NAME).is_dir()]
    assert found, "penguin-jupyter is not in any labextensions directory"
    assert_built_extension(found[0])
