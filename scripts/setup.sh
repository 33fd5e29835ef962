#!/usr/bin/env bash
# Create .venv and install penguin_jupyter editable.
#   --test    the test extra too (the newest releases pyproject.toml's bounds allow), and, as root,
#             Debian's chromium (browser tests) and a Java runtime (the real Spark of the `data` extra).
#   --lowest  after --test: .venv-lowest, the test extra with every library at the lower bound
#             pyproject.toml declares (scripts/lower_bounds.py), resolved by uv; the repository is
#             imported from its folder there (CI's lowest-versions pass, scripts/test.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}

if [ "${1:-}" = "--lowest" ]; then
  [ -x .venv/bin/python ] || { echo "scripts/setup.sh --lowest needs .venv: run scripts/setup.sh --test first"; exit 1; }
  UV=(.venv/bin/python -m uv)  # uv comes with the test extra
  [ -x .venv-lowest/bin/python ] || "${UV[@]}" venv -q --python "$(.venv/bin/python -c 'import sys; print(sys._base_executable)')" .venv-lowest
  .venv/bin/python scripts/lower_bounds.py data > .venv-lowest/lower-bounds.txt
  "${UV[@]}" pip install -q --python .venv-lowest/bin/python -c .venv-lowest/lower-bounds.txt -r pyproject.toml --extra test
  exit 0
fi

[ -x .venv/bin/python ] || "$PY" -m venv .venv
. .venv/bin/activate
python -m pip install -q --upgrade pip >/dev/null
if [ "${1:-}" = "--test" ]; then
  python -m pip install -q -e '.[test]'
  missing=()
  [ -x /usr/bin/chromium ] || missing+=(chromium fonts-noto-color-emoji)
  command -v java >/dev/null || missing+=(default-jre-headless)
  if [ ${#missing[@]} -gt 0 ] && [ "$(id -u)" = 0 ]; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null) \
      || echo "could not install ${missing[*]}: browser tests skip without chromium, the Spark test fails without java"
  fi
else
  python -m pip install -q -e .
fi
