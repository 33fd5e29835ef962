#!/usr/bin/env bash
# Create .venv and install penguin_jupyter editable.
#   --demo    the demo extra too (what the example notebooks import: pandas, matplotlib, dask).
#   --test    the test extra too (the newest releases pyproject.toml's bounds allow), and, as root,
#             Debian's chromium (browser tests) and a Java runtime (the real Spark of the `data` extra).
#   --lowest  after --test: .venv-lowest, the test extra with every library at the lower bound
#             pyproject.toml declares (scripts/lower_bounds.py), resolved by uv, and the package
#             editable (CI's lowest-versions pass, scripts/test.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}

if [ "${1:-}" = "--lowest" ]; then
  [ -x .venv/bin/python ] || { echo "scripts/setup.sh --lowest needs .venv: run scripts/setup.sh --test first"; exit 1; }
  UV=(.venv/bin/python -m uv)  # uv comes with the test extra
  [ -x .venv-lowest/bin/python ] || "${UV[@]}" venv -q --python "$(.venv/bin/python -c 'import sys; print(sys._base_executable)')" .venv-lowest
  .venv/bin/python scripts/lower_bounds.py data > .venv-lowest/lower-bounds.txt
  "${UV[@]}" pip install -q --python .venv-lowest/bin/python -c .venv-lowest/lower-bounds.txt -r pyproject.toml --extra test
  "${UV[@]}" pip install -q --python .venv-lowest/bin/python --no-deps -e .  # subprocesses import the package too
  exit 0
fi

[ -x .venv/bin/python ] || "$PY" -m venv .venv
. .venv/bin/activate
python -m pip install -q --upgrade pip >/dev/null
# Debian packages, installed when missing (as root), while pip installs: bubblewrap, the sandbox of
# `--approve auto` (docs/security.md "Sandbox"); with --test also chromium (the browser tests) and
# a Java runtime (the Spark test).
missing=()
command -v bwrap >/dev/null || missing+=(bubblewrap)
if [ "${1:-}" = "--test" ]; then
  [ -x /usr/bin/chromium ] || missing+=(chromium fonts-noto-color-emoji)
  command -v java >/dev/null || missing+=(default-jre-headless)
fi
apt_job=""
if [ ${#missing[@]} -gt 0 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null) &
  apt_job=$!
fi
if [ "${1:-}" = "--test" ]; then
  python -m pip install -q -e '.[test]'
  if [ "$(id -u)" = 0 ]; then  # the ordinary user the sandbox's escape suite also runs as
    id pjsandbox >/dev/null 2>&1 || useradd --create-home --shell /bin/bash pjsandbox \
      || echo "user pjsandbox could not be created; the ordinary-user sandbox test will skip"
  fi
elif [ "${1:-}" = "--demo" ]; then
  python -m pip install -q -e '.[demo]'
else
  python -m pip install -q -e .
fi
if [ -n "$apt_job" ] && ! wait "$apt_job"; then
  echo "could not install ${missing[*]}: without bubblewrap --approve auto acts as ask and the sandbox" \
    "tests skip; without chromium the browser tests skip; without java the Spark test fails"
fi
