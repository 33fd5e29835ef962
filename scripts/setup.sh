#!/usr/bin/env bash
# Create .venv and install penguin_jupyter editable. `--demo` adds the demo extra (what the example
# notebooks import: pandas, matplotlib, dask); `--test` adds the test extra and chromium.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
. .venv/bin/activate
python -m pip install -q --upgrade pip >/dev/null
# bubblewrap: the sandbox of `--approve auto` (docs/security.md "Sandbox"); Debian's package
if ! command -v bwrap >/dev/null && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap >/dev/null) \
    || echo "bubblewrap could not be installed; --approve auto will act as ask and sandbox tests will skip"
fi
if [ "${1:-}" = "--test" ]; then
  python -m pip install -q -e '.[test]'
  if [ "$(id -u)" = 0 ]; then  # the ordinary user the sandbox's escape suite also runs as
    id pjsandbox >/dev/null 2>&1 || useradd --create-home --shell /bin/bash pjsandbox \
      || echo "user pjsandbox could not be created; the ordinary-user sandbox test will skip"
  fi
  if [ ! -x /usr/bin/chromium ] && [ "$(id -u)" = 0 ]; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-noto-color-emoji >/dev/null) \
      || echo "chromium could not be installed; browser tests will skip"
  fi
elif [ "${1:-}" = "--demo" ]; then
  python -m pip install -q -e '.[demo]'
else
  python -m pip install -q -e .
fi
