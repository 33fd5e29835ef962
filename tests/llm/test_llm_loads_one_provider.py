"""A model on one provider loads that provider's SDK only: a kernel talking to an OpenAI-protocol
endpoint never imports anthropic or google-genai (together ~2.2 s of CPU at every kernel's first
`%%penguin` cell), and a Claude client still gets its Bedrock check (`agenthub.claude_bedrock`)."""

from __future__ import annotations

from penguin_jupyter.testing import ScriptedModelServer
from tests.support.llm import run_script

RUN = """
import asyncio, json, sys
from penguin_jupyter.llm import GenerativeModel, GenerativeModelConfig
from penguin_jupyter.omni import user_text
from penguin_jupyter.seams import status_lines
from tests.support.llm import collect

url, model_id, client_type = sys.argv[1:4]
config = GenerativeModelConfig(model_id=model_id, client_type=client_type or None, api_key="sk-one", base_url=url)
model = GenerativeModel(config)
_, outcome = asyncio.run(collect(model, [user_text("hi")]))
loaded = sorted(name for name in ("anthropic", "google.genai", "openai") if name in sys.modules)
bedrock = [line for line in status_lines() if line.startswith("agenthub.claude_bedrock:")]
print(json.dumps({"status": outcome.status, "loaded": loaded, "bedrock": bedrock}))
"""


def _run(model_id: str, client_type: str = "", *, provider_root: bool = False) -> dict[str, object]:
    with ScriptedModelServer(["Hello."], model=model_id, api_key="sk-one") as server:
        url = server.root_url if provider_root else server.url
        result, _ = run_script(RUN, url, model_id, client_type)
    return result


def test_an_openai_model_loads_neither_anthropic_nor_google_genai() -> None:
    result = _run("any-model", "openai-chat")
    assert result["status"] == "completed"
    assert result["loaded"] == ["openai"]
    assert result["bedrock"] == ["agenthub.claude_bedrock: not in use (no Claude client in this process)"]


def test_a_claude_model_loads_anthropic_and_checks_its_bedrock_attribute() -> None:
    result = _run("claude-sonnet-4-6", provider_root=True)
    assert result["status"] == "completed"
    assert "anthropic" in result["loaded"] and "google.genai" not in result["loaded"]
    assert result["bedrock"] == ["agenthub.claude_bedrock: on"]
