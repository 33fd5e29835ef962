#!/usr/bin/env bash
# CI (.ci/run) and the README's test command. Sets up .venv (the newest releases pyproject.toml's
# bounds allow) and .venv-lowest (every declared lower bound), type-checks and lints the package,
# then runs pytest in passes that share the two cores:
#   1. the fast tests (not browser) in .venv on three pytest-xdist workers, while mypy runs and
#      the security tests run again with every third-party-internal fast path off
#      (PENGUIN_SDK_INTERNALS=off);
#   2. the browser tests and the package's own build tests (marker `install`) in .venv, one at a
#      time (one JupyterLab, one chromium), while the tests of what a library version changes
#      (LOWEST_PATHS below) run again in .venv-lowest, every library at its lower bound.
# With arguments, only `pytest "$@"` runs in .venv (after the static checks). PENGUIN_TYPECHECK=0
# skips mypy and ruff. Each step prints its elapsed time; pytest's "no tests collected" (exit 5)
# counts as a pass. docs/ci.md explains the split and its figures.
set -uo pipefail
cd "$(dirname "$0")/.."
START=$SECONDS
LOGS=.ci-logs
mkdir -p "$LOGS"
step() { echo "== $1 (at $((SECONDS - START)) s)"; }
passed() { [ "$1" -eq 0 ] || [ "$1" -eq 5 ]; }  # 5: pytest collected no tests
PYTEST=(python -m pytest -q -p no:cacheprovider)
FAST="not browser and not install"
# At the lowest versions: what a library version changes — the model protocols (tests/llm), the
# variable summaries (pandas, polars, dask, Spark), every check of a library internal (marker
# `seams`) and the dependency declarations; kernels only where a seams test needs one.
LOWEST="not browser and not install and (not kernel or seams)"
LOWEST_PATHS=(tests/llm tests/notebook/test_seams_kernel.py tests/test_seams_registry.py tests/test_seams_fence.py
  tests/test_dependencies.py tests/session/test_session_host_seams.py tests/notebook/test_summaries_lazy.py
  tests/notebook/test_summaries_bounded.py)

bash scripts/setup.sh --test || exit 1
. .venv/bin/activate
step "set up .venv"

static_checks() {
  [ "${PENGUIN_TYPECHECK:-1}" != "0" ] || return 0
  ruff check penguin_jupyter tests || { echo "lint failed (ruff check penguin_jupyter tests)"; return 1; }
  python -m mypy penguin_jupyter || { echo "type check failed (mypy penguin_jupyter)"; return 1; }
}

if [ $# -gt 0 ]; then
  static_checks || exit 1
  "${PYTEST[@]}" "$@"
  rc=$?
  if [ "$rc" -eq 5 ]; then echo "pytest collected no tests"; rc=0; fi
  exit "$rc"
fi

# .venv-lowest is resolved and downloaded while the first pass runs (it is mostly network).
bash scripts/setup.sh --lowest > "$LOGS/setup-lowest.log" 2>&1 &
lowest_setup=$!
static_checks > "$LOGS/static.log" 2>&1 &
static=$!

# Most fast tests wait on a kernel or a subprocess (two workers left the CPU 58 % idle), so three
# workers share the two cores, and the security tests with every internal-based fast path off
# (PENGUIN_SDK_INTERNALS=off) run beside them in one more process.
WORKERS=${PENGUIN_TEST_WORKERS:-3}
step "pass 1: fast tests, newest versions ($WORKERS workers); beside them the security tests with PENGUIN_SDK_INTERNALS=off"
PENGUIN_SDK_INTERNALS=off "${PYTEST[@]}" -m security > "$LOGS/security.log" 2>&1 &
security_pid=$!
"${PYTEST[@]}" -m "$FAST" -n "$WORKERS" --dist loadgroup
fast=$?
wait "$security_pid"; security=$?
echo "-- security tests with PENGUIN_SDK_INTERNALS=off:"
tail -15 "$LOGS/security.log"
wait "$static"; static_rc=$?
cat "$LOGS/static.log"
wait "$lowest_setup"; lowest_setup_rc=$?
[ "$lowest_setup_rc" -eq 0 ] || { tail -20 "$LOGS/setup-lowest.log"; echo "could not set up .venv-lowest"; }
step "pass 1 done (fast: $fast, static checks: $static_rc)"

# Beside the browser tests (one JupyterLab, one chromium, mostly waiting on the page), one process
# runs the lowest-versions tests.
step "pass 2: browser and install tests; beside them, the lowest-versions tests"
lowest=1
if [ "$lowest_setup_rc" -eq 0 ]; then
  .venv-lowest/bin/python -m pytest -q -p no:cacheprovider -m "$LOWEST" "${LOWEST_PATHS[@]}" > "$LOGS/lowest.log" 2>&1 &
  lowest_pid=$!
fi
"${PYTEST[@]}" -m "browser or install"
browser=$?
step "browser and install tests done ($browser)"
if [ "$lowest_setup_rc" -eq 0 ]; then
  wait "$lowest_pid"; lowest=$?
  echo "-- the lowest-versions tests ($(tr '\n' ' ' < .venv-lowest/lower-bounds.txt)):"
  tail -15 "$LOGS/lowest.log"
fi
step "done"

rc=0
for part in "fast:$fast" "static checks:$static_rc" "browser:$browser" "lowest versions:$lowest" "security:$security"; do
  if ! passed "${part##*:}"; then echo "FAILED: ${part%:*} (exit ${part##*:})"; rc=1; fi
done
exit "$rc"
