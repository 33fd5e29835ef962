"""In-process fakes of the acceptance scenarios' test vocabulary (tests/SCENARIOS.md), shared by every area's tests.

* `ScriptedLLM(*replies)` — a stateful fake LLM: its k-th `stream_generate` records the input
  (`calls[k]`) and thinking level (`thinking_levels[k]`), then plays `replies[k]`: a list of
  items, or `reply(*items, outcome=…)`. An item is an OmniMessage (yielded), a zero-argument
  callable (called when reached: use it to steer, abort, push notices…) or `Pause(seconds)`
  (a sleep that ends early when the signal fires). The reply's outcome (default completed) is
  the stream's last item; a fired signal ends the stream early with `aborted`. Past the script
  the outcome is `failed("no scripted response")`.
* `LLMFactory(*llms)` — a `create_llm` for compaction: hands out the given LLMs in order and
  records the `TokenCounts` it was called with (`tokens`).
* `usage(r, s)` — a `token_usage` event with `request.total = r`, `session.total = s`.
* `FakeEnv(...)` — an Environment whose `execute_tool` yields one complete
  `tool_call_output{"tool ran"}`; options: `output`, `delay` (seconds, honouring the signal:
  an abort answers `[interrupted: tool aborted by user]`/aborted), `handler` (an async
  generator function `(request) -> messages` replacing the default), `raises` (an exception
  raised before anything is yielded). `requests` lists what it was asked to run.
* `allow` / `deny` / `forbid` — approval callbacks answering "allow" / "deny" / "forbidden".
* `settings(**overrides)` — `CompactionSettings(100, -1, "summarize", "COMPACT NOW")`.
* `MemoryTrace` — a TraceSink keeping each Trace file as a list (`files`, `records`).
* `types(msgs)`, `texts(msgs)`, `collect(stream)` — small readers.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

from penguin_jupyter.engine import CompactionSettings
from penguin_jupyter.interfaces import (
    GenerativeModelParameters,
    LLMOutcome,
    ToolDefinition,
    ToolExecutionRequest,
)
from penguin_jupyter.omni import OmniMessage, TokenCounts, token_usage, tool_call_output

__all__ = [
    "FakeEnv",
    "LLMFactory",
    "MemoryTrace",
    "Pause",
    "Reply",
    "ScriptedLLM",
    "allow",
    "collect",
    "deny",
    "forbid",
    "reply",
    "settings",
    "texts",
    "types",
    "usage",
]

COMPLETED = LLMOutcome("completed")


@dataclass(frozen=True)
class Pause:
    seconds: float


@dataclass
class Reply:
    items: list[Any] = field(default_factory=list)
    outcome: LLMOutcome = COMPLETED


def reply(*items: Any, outcome: LLMOutcome | None = None) -> Reply:
    return Reply(list(items), outcome or COMPLETED)


async def _sleep_unless_aborted(seconds: float, signal: Any) -> None:
    if signal is None:
        await asyncio.sleep(seconds)
        return
    try:
        await asyncio.wait_for(signal.wait(), seconds)
    except TimeoutError:
        pass


class ScriptedLLM:
    def __init__(self, *replies: Reply | list[Any]) -> None:
        self.replies = [r if isinstance(r, Reply) else Reply(list(r)) for r in replies]
        self.calls: list[list[OmniMessage]] = []
        self.thinking_levels: list[str | None] = []

    async def stream_generate(
        self, parameters: GenerativeModelParameters
    ) -> AsyncIterator[OmniMessage | LLMOutcome]:
        index = len(self.calls)
        self.calls.append(list(parameters.new_messages))
        self.thinking_levels.append(parameters.thinking_level)
        if index >= len(self.replies):
            yield LLMOutcome("failed", "no scripted response")
            return
        signal = parameters.signal
        current = self.replies[index]
        for item in current.items:
            if signal is not None and signal.aborted:
                yield LLMOutcome("aborted")
                return
            if isinstance(item, Pause):
                await _sleep_unless_aborted(item.seconds, signal)
            elif isinstance(item, OmniMessage):
                yield item
            else:
                result = item()
                if asyncio.iscoroutine(result):
                    await result
        if signal is not None and signal.aborted:
            yield LLMOutcome("aborted")
            return
        yield current.outcome


class LLMFactory:
    def __init__(self, *llms: ScriptedLLM) -> None:
        self.llms = list(llms)
        self.tokens: list[TokenCounts] = []

    def __call__(self, session_tokens: TokenCounts) -> ScriptedLLM:
        self.tokens.append(session_tokens)
        return self.llms[len(self.tokens) - 1]


def usage(r: int, s: int | None = None) -> OmniMessage:
    return token_usage(session={"total": r if s is None else s}, request={"total": r})


HandlerFn = Callable[[ToolExecutionRequest], AsyncIterator[OmniMessage]]


class FakeEnv:
    def __init__(
        self,
        *,
        output: str = "tool ran",
        delay: float = 0.0,
        handler: HandlerFn | None = None,
        raises: Exception | None = None,
    ) -> None:
        self.output = output
        self.delay = delay
        self.handler = handler
        self.raises = raises
        self.requests: list[ToolExecutionRequest] = []
        self.disposed = False

    async def list_tools(self) -> list[ToolDefinition]:
        return [ToolDefinition(name="exec_command", description="run a command")]

    async def execute_tool(self, request: ToolExecutionRequest) -> AsyncIterator[OmniMessage]:
        self.requests.append(request)
        call_id = request.tool_call.payload.tool_call_id
        if self.raises is not None:
            raise self.raises
        if self.handler is not None:
            async for msg in self.handler(request):
                yield msg
            return
        if self.delay:
            await _sleep_unless_aborted(self.delay, request.signal)
            if request.signal is not None and request.signal.aborted:
                yield tool_call_output("[interrupted: tool aborted by user]", call_id, "aborted")
                return
        yield tool_call_output(self.output, call_id)

    def tool_permission(self, name: str) -> str | None:
        return "rw"

    def dispose(self) -> None:
        self.disposed = True


async def allow(_call: OmniMessage) -> str:
    return "allow"


async def deny(_call: OmniMessage) -> str:
    return "deny"


async def forbid(_call: OmniMessage) -> str:
    return "forbidden"


def settings(**overrides: Any) -> CompactionSettings:
    values: dict[str, Any] = {
        "max_context_length": 100,
        "max_session_turns": -1,
        "mode": "summarize",
        "prompt": "COMPACT NOW",
    }
    values.update(overrides)
    return CompactionSettings(**values)


class MemoryTrace:
    """`files[i]` holds the records of Trace file i+1; `rotate()` starts the next file."""

    def __init__(self) -> None:
        self.files: list[list[OmniMessage]] = []
        self._rotate_next = True

    def write(self, msg: OmniMessage) -> None:
        if self._rotate_next:
            self.files.append([])
            self._rotate_next = False
        self.files[-1].append(msg)

    def rotate(self) -> None:
        self._rotate_next = True

    @property
    def records(self) -> list[OmniMessage]:
        return [msg for file in self.files for msg in file]


def types(msgs: list[OmniMessage]) -> list[str]:
    return [getattr(m.payload, "type", m.type) for m in msgs]


def texts(msgs: list[OmniMessage]) -> list[str]:
    return [m.payload.text for m in msgs if getattr(m.payload, "text", None) is not None]


async def collect(stream: AsyncIterator[OmniMessage]) -> list[OmniMessage]:
    return [msg async for msg in stream]
