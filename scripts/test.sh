#!/usr/bin/env bash
# Set up .venv (package + test extra + Debian chromium for the browser tests) and run pytest.
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --test || exit 1
. .venv/bin/activate
python -m pytest -q -p no:cacheprovider "$@"
rc=$?
if [ "$rc" -eq 5 ]; then echo "pytest collected no tests"; rc=0; fi
exit "$rc"
