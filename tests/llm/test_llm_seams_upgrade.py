"""An upgrade that moves an internal the model side relies on (docs/seams.md): simulated by a
renamed copy of the installed package first on a subprocess's PYTHONPATH (tests/support/upgrade.py).

* agenthub renames the protocol client's `_client`: the SDK object is still found by its public
  shape, so the SDK's own retries stay off — a failed attempt is exactly one HTTP request (on
  3758335 the SDK's `max_retries=2` came back silently: the 503 was retried inside the attempt).
* agenthub stops keeping an SDK object at all (builds one per request): the seam is off, the
  SDK's retries stand, and that is said — `status_lines` names `agenthub.sdk_object` off.
* openai renames its per-attempt hook `_prepare_options`: the fast path is off (said once in the
  log) and the request is still the SDK's own, completed.
* `PENGUIN_SDK_INTERNALS=off`: every fast path off, the rules on, a request completes."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from penguin_jupyter.testing import ScriptedModelServer
from tests.support.llm import run_script
from tests.support.upgrade import renamed_package

pytestmark = pytest.mark.seams

KEY = "sk-seams-upgrade"
FAILED_THEN_RECOVERED = [{"fault": {"kind": "http", "status": 503}}, "Recovered."]

RUN = """
import asyncio, json, logging, sys
from penguin_jupyter.llm import GenerativeModel, GenerativeModelConfig
from penguin_jupyter.omni import user_text
from penguin_jupyter.seams import status_lines
from tests.support.llm import collect

logging.basicConfig(level=logging.WARNING, format="LOG %(message)s", stream=sys.stderr)
url, key, client_type = sys.argv[1:4]
model = GenerativeModel(GenerativeModelConfig(model_id="any-model", client_type=client_type, api_key=key, base_url=url))
_, outcome = asyncio.run(collect(model, [user_text("hi")]))
print(json.dumps({"status": outcome.status, "seams": status_lines()}))
"""


def _run(server: ScriptedModelServer, site: Path | None, client_type: str = "openai-chat", **env: str) -> dict[str, Any]:
    result, stderr = run_script(RUN, server.url, KEY, client_type, site=site, **env)
    result["log"] = [line for line in stderr.splitlines() if line.startswith("LOG ")]
    return result


def _seam(result: dict[str, Any], name: str) -> str:
    (line,) = [line for line in result["seams"] if line.startswith(name + ":")]
    return line


def test_agenthub_renaming_its_sdk_attribute_keeps_one_request_per_attempt(tmp_path: Path) -> None:
    site = renamed_package(tmp_path, "agenthub", r"\._client\b", "._sdk")
    with ScriptedModelServer(FAILED_THEN_RECOVERED, model="any-model", api_key=KEY) as server:
        result = _run(server, site)
        calls = len(server.calls)
    assert calls == 1, f"the SDK retried inside the attempt ({calls} requests)"
    assert result["status"] == "timeout", result  # the engine's to retry, not the SDK's
    assert _seam(result, "agenthub.sdk_object") == "agenthub.sdk_object: on (found as '_sdk', not '_client')"


def test_agenthub_keeping_no_sdk_object_says_the_sdk_retries_stand(tmp_path: Path) -> None:
    site = _no_sdk_object(tmp_path)
    with ScriptedModelServer(FAILED_THEN_RECOVERED, model="any-model", api_key=KEY) as server:
        result = _run(server, site)
    line = _seam(result, "agenthub.sdk_object")
    assert line.startswith("agenthub.sdk_object: off — OpenaiChatClient holds no SDK client agenthub reads"), line
    assert "the SDK's own retries stand" in line
    assert any("agenthub.sdk_object is off" in log for log in result["log"]), result["log"]


def test_openai_renaming_its_request_hook_turns_the_fast_path_off_and_requests_still_complete(
    tmp_path: Path,
) -> None:
    site = renamed_package(tmp_path, "openai", r"\b_prepare_options\b", "_prepare_request_options")
    with ScriptedModelServer(["Hello."], model="any-model", api_key=KEY) as server:
        result = _run(server, site)
        assert not [call.error for call in server.calls if call.error]
    assert result["status"] == "completed"
    line = _seam(result, "openai.prepare_options")
    assert line.startswith("openai.prepare_options: off — openai's AsyncOpenAI._prepare_options is gone"), line
    assert [log for log in result["log"] if "openai.prepare_options is off" in log], "said once in the log"
    assert _seam(result, "agenthub.sdk_object") == "agenthub.sdk_object: on"


def test_the_switch_turns_every_fast_path_off_and_leaves_the_rules_on() -> None:
    with ScriptedModelServer(FAILED_THEN_RECOVERED, model="any-model", api_key=KEY) as server:
        result = _run(server, None, PENGUIN_SDK_INTERNALS="off")
        calls = len(server.calls)
    assert calls == 1 and result["status"] == "timeout", "one request per attempt with the switch off too"
    for name in (
        "openai.prepare_options",
        "agenthub.conversion",
        "agenthub.claude_bedrock",
        "anthropic.copy_and_prepare",
        "genai.request_path",
    ):
        assert _seam(result, name) == f"{name}: off — PENGUIN_SDK_INTERNALS=off; " + _seam(result, name).split("; ", 1)[1]
    for name in ("agenthub.routing", "agenthub.sdk_object", "agenthub.ant_messages"):
        assert _seam(result, name) == f"{name}: on"
    assert not result["log"], "a switch the user set is not a warning"


def _no_sdk_object(tmp_path: Path) -> Path:
    """agenthub's openai-chat client building its SDK object per request (none kept to find)."""
    site = renamed_package(
        tmp_path,
        "agenthub",
        r"self\._client = AsyncOpenAI\(",
        "self._make_client = lambda: AsyncOpenAI(",
        files=("openai_chat/client.py",),
    )
    client = site / "agenthub" / "openai_chat" / "client.py"
    client.write_text(client.read_text().replace("self._client.", "self._make_client()."))
    return site


@pytest.mark.kernel
def test_a_penguin_cell_says_when_the_sdks_own_retries_could_not_be_turned_off(tmp_path: Path) -> None:
    from tests.support.kernel import KernelHarness, kernel_env
    from tests.support.session import configure_model

    site = _no_sdk_object(tmp_path)
    with ScriptedModelServer(["Hello."]) as server:
        configure_model(Path(os.environ["PENGUIN_HOME"]), server)
        env = kernel_env()
        env["PYTHONPATH"] = os.pathsep.join([str(site), env["PYTHONPATH"]])
        kernel = KernelHarness(str(tmp_path), env)
        try:
            assert kernel.execute("%load_ext penguin_jupyter").reply["content"]["status"] == "ok"
            cell = kernel.execute("%%penguin\nSay hello", timeout=120)
            again = kernel.execute("%%penguin\nSay hello again", timeout=120)
        finally:
            kernel.close()
    line = "penguin: agenthub.sdk_object is off (OpenaiChatClient holds no SDK client agenthub reads)"
    assert cell.reply["content"]["status"] == "ok"
    assert cell.stderr.count(line) == 1, cell.stderr
    assert "the SDK's own retries stand (up to 3 HTTP requests per attempt)" in cell.stderr
    assert again.stderr.count(line) == 1, "said in every Task's cell while it is off"
