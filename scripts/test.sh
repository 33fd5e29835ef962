#!/usr/bin/env bash
# Set up .venv (package + test extra + Debian chromium for the browser tests), type-check and lint
# the package, and run pytest.
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --test || exit 1
. .venv/bin/activate
# Static checks first (PENGUIN_TYPECHECK=0 skips them): the type checker over the package and
# ruff (including C901, max-complexity 15) over the package and the tests; a finding fails the run.
if [ "${PENGUIN_TYPECHECK:-1}" != "0" ]; then
  python -m mypy penguin_jupyter || { echo "type check failed (mypy penguin_jupyter)"; exit 1; }
  ruff check penguin_jupyter tests || { echo "lint failed (ruff check penguin_jupyter tests)"; exit 1; }
fi
python -m pytest -q -p no:cacheprovider "$@"
rc=$?
if [ "$rc" -eq 5 ]; then echo "pytest collected no tests"; rc=0; fi
exit "$rc"
