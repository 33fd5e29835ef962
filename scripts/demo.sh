#!/usr/bin/env bash
# Offline demo: set up the venv (the package and its demo extra, which every example notebook
# needs), execute examples/quickstart.ipynb headless against the scripted model server, and check
# that the executed notebook holds the static transcript.
# Output goes to a temporary build directory (printed at the end), never into the repo.
# PENGUIN_DEMO_SKIP_SETUP=1 reuses an existing .venv without reinstalling.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$(pwd)
if [ "${PENGUIN_DEMO_SKIP_SETUP:-}" != 1 ]; then
  bash scripts/setup.sh --demo
fi
. .venv/bin/activate
export PYTHONPATH="$REPO${PYTHONPATH:+:$PYTHONPATH}"
OUT=${PENGUIN_DEMO_OUT:-$(mktemp -d "${TMPDIR:-/tmp}/penguin-demo-XXXXXX")}
mkdir -p "$OUT"
export PENGUIN_HOME="$OUT/penguin-home"   # never touch the user's ~/.penguin
cp examples/quickstart.ipynb "$OUT/quickstart.ipynb"
cd "$OUT"
jupyter nbconvert --to notebook --execute quickstart.ipynb --output quickstart.out.ipynb \
  --ExecutePreprocessor.timeout=180 --ExecutePreprocessor.store_widget_state=False
python - "$OUT/quickstart.out.ipynb" <<'PY'
import json, sys
nb = json.load(open(sys.argv[1], encoding="utf-8"))
mime = "application/vnd.penguin.transcript+json"
bundles = [o["data"] for c in nb["cells"] if c["cell_type"] == "code" for o in c.get("outputs", [])
           if mime in o.get("data", {})]
errors = [o for c in nb["cells"] for o in c.get("outputs", []) if o.get("output_type") == "error"]
if errors:
    sys.exit(f"demo: a cell failed: {errors[0].get('ename')}: {errors[0].get('evalue')}")
if not bundles:
    sys.exit("demo: the executed notebook has no static transcript")
bundle = bundles[-1]
kinds = [m["payload"].get("type") for m in bundle[mime]["messages"]]
if bundle[mime]["status"] != "completed" or kinds.count("tool_call_output") != 3:
    sys.exit(f"demo: unexpected transcript (status {bundle[mime]['status']}, {kinds.count('tool_call_output')} tool outputs)")
html = bundle["text/html"]
html = "".join(html) if isinstance(html, list) else html
if "summary.md" not in html:
    sys.exit("demo: the transcript HTML does not mention summary.md")
print("demo: ok — static transcript with", len(kinds), "messages;", "HTML", len(html), "chars")
PY
test -s "$OUT/summary.md"
echo "demo: executed notebook at $OUT/quickstart.out.ipynb"
