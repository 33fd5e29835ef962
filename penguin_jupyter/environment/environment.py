"""The Environment (docs/environment.md): assembles the toolset (one path for every tool: each is a
`registry.ToolRegistration` — the configured builtin entries and the `extra_tools` the host
registers, such as the notebook's kernel and notebook tools — built by its factory and its
declaration declared, so `registry.declaration_of` answers for it; the one place a disabled
tool — builtin, extra or MCP — is left out of what the model is offered), dispatches calls
through the uniform close-out, owns the command-session registry, the background-report hub and
the MCP manager, and releases all of them on dispose.

Tool behaviour lives in `tools/`, framing in `close_out.py`, MCP in `mcp/`.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from ..interfaces import AbortSignal, EnvironmentServices, Permission, ToolDefinition, ToolExecutionRequest
from ..omni import OmniMessage, partial_tool_call_output, tool_call_output
from ..omni.models import ToolCallPayload
from ..redaction import EMPTY
from .close_out import CallSetting, run_with_close_out
from .commands import CommandSessionManager
from .defaults import default_tool_config, model_facing_parameters
from .environment_config import EnvironmentConfig
from .notices import BackgroundEvent, BackgroundListener, NoticeHub
from .registry import BUILTIN_TOOL_FACTORIES, ToolRegistration, declare, registration
from .sandbox import CommandSandbox, SandboxConfig
from .tool_declaration import ToolDeclaration
from .types import BuiltinTool, ToolDefinitionConfig

log = logging.getLogger(__name__)

if TYPE_CHECKING:  # imported on first use (the mcp SDK is slow to import)
    from .mcp import McpManager

MCP_PREFIX = "mcp__"
# Keys in EnvironmentServices.extra: the NoticeHub (set by the Environment), an optional
# `() -> ProxyPolicy | None` callable (set by the host; re-read at every command spawn) and an
# optional `SandboxConfig` (set by the Agent: how commands run in the sandbox).
NOTICES_KEY = "notices"
PROXY_POLICY_KEY = "proxy_policy"
SANDBOX_KEY = "sandbox"


class Environment:
    """Implements EnvironmentInterface. Never raises out of `execute_tool`."""

    def __init__(self, config: EnvironmentConfig):
        self.config = config
        self.notices = NoticeHub()
        services = config.services or EnvironmentServices()
        proxy_policy = services.extra.get(PROXY_POLICY_KEY)
        sandbox_config = services.extra.get(SANDBOX_KEY)
        self.command_sessions = CommandSessionManager(
            self.notices,
            vault=config.vault,
            proxy_policy=proxy_policy if callable(proxy_policy) else None,
            sandbox=CommandSandbox(
                sandbox_config if isinstance(sandbox_config, SandboxConfig) else SandboxConfig(),
                config.workspace_dir,
            ),
        )
        # Tools reach runtime services through this object: the command registry, and the
        # notice hub for tools that arm background reports of their own (subagents).
        self.services = dataclasses.replace(
            services,
            command_sessions=services.command_sessions or self.command_sessions,
            extra={**services.extra, NOTICES_KEY: self.notices},
        )
        self._tools: dict[str, BuiltinTool] = {}
        self._assemble()
        self._mcp: McpManager | None = None
        if config.tool_config.mcp_servers:
            from .mcp import McpManager

            self._mcp = McpManager(
                list(config.tool_config.mcp_servers),
                workspace_dir=config.workspace_dir,
                vault=config.vault,
                disabled=config.disabled_tools,
                sandbox=self.command_sessions.sandbox,
            )
        self._disposed = False

    # --- assembly ----------------------------------------------------------------------------

    def _entries(self) -> list[ToolDefinitionConfig]:
        tool_config = self.config.tool_config
        builtin = tool_config.builtin if tool_config.builtin is not None else default_tool_config().builtin
        return [*(builtin or []), *tool_config.custom_tools]

    def _assemble(self) -> None:
        """Every tool the one way: (the entry in force, its registration) → `_register`. The
        builtin tools come from the configured entries (which may change their limits), the
        host's in `extra_tools` with their declared entry."""
        model_class = self.config.model_class
        chosen: list[tuple[ToolDefinitionConfig, ToolRegistration]] = []
        for entry in self._entries():
            if model_class is not None and entry.for_model is not None and entry.for_model != model_class:
                continue
            factory = BUILTIN_TOOL_FACTORIES.get(entry.name)  # (the public table: a host may add to it)
            if factory is not None:
                declared = getattr(factory, "declaration", None)
                declaration = declared if isinstance(declared, ToolDeclaration) else ToolDeclaration.undeclared(entry)
                chosen.append((entry, ToolRegistration(declaration, factory)))
        for item in self.config.extra_tools:
            extra = registration(item)
            entry = item.definition if not isinstance(item, ToolRegistration) else extra.declaration.definition()
            chosen.append((entry, extra))
        for entry, registered in chosen:
            self._register(entry, registered)

    def _register(self, entry: ToolDefinitionConfig, registered: ToolRegistration) -> None:
        name = entry.name
        if name in self._tools or name in self.config.disabled_tools:
            return
        declare(registered.declaration)
        tool = registered.factory(entry, self.services)
        self._tools[tool.name] = tool

    def _mcp_tools(self) -> list[BuiltinTool]:
        """The connected MCP servers' tools, less the disabled ones."""
        if self._mcp is None:
            return []
        return [t for t in self._mcp.tools if t.name not in self.config.disabled_tools]

    # --- EnvironmentInterface ----------------------------------------------------------------

    async def list_tools(self) -> list[ToolDefinition]:
        tools = [
            ToolDefinition(t.name, t.definition.description, model_facing_parameters(t.definition))
            for t in self._tools.values()
        ]
        if self._mcp is not None:
            await self.connect_mcp()
            tools += [
                ToolDefinition(t.name, t.definition.description, t.definition.parameters)
                for t in self._mcp_tools()
            ]
        return tools

    def tool_permission(self, name: str) -> Permission | None:
        tool = self._tools.get(name)
        if tool is not None:
            return tool.definition.permission
        if self._mcp is not None and name not in self.config.disabled_tools:
            return self._mcp.tool_permission(name)
        return None

    async def execute_tool(self, request: ToolExecutionRequest) -> AsyncIterator[OmniMessage]:
        payload = request.tool_call.payload
        if not isinstance(payload, ToolCallPayload):
            call_id = getattr(payload, "tool_call_id", "") or ""
            message = "Unknown tool: (not a tool_call message)"
            yield partial_tool_call_output("start", "", call_id)
            yield partial_tool_call_output("delta", message, call_id)
            yield partial_tool_call_output("stop", "", call_id, stop_reason="failed")
            yield tool_call_output(message, call_id, stop_reason="failed")
            return
        setting = CallSetting(
            name=payload.name,
            arguments=payload.arguments,
            tool_call_id=payload.tool_call_id,
            signal=request.signal,
            approve=request.approve,
            workspace_dir=self.config.workspace_dir,
            services=self.services,
            vault=self.config.vault,
            scratchpad_dir=self.config.session_scratchpad_dir,
            redactor=self.config.redactor or EMPTY,
        )

        async def resolve() -> BuiltinTool | None:
            return await self._resolve(payload.name, request.signal)

        async for msg in run_with_close_out(setting, resolve):
            yield msg

    async def _resolve(self, name: str, signal: AbortSignal | None) -> BuiltinTool | None:
        tool = self._tools.get(name)
        if tool is not None:
            return tool
        if self._mcp is None or not name.startswith(MCP_PREFIX):
            return None
        await self._mcp.connect(signal)
        for mcp_tool in self._mcp_tools():
            if mcp_tool.name == name:
                return mcp_tool
        return None

    # --- MCP ---------------------------------------------------------------------------------

    @property
    def mcp_server_names(self) -> list[str]:
        return [server.name for server in self.config.tool_config.mcp_servers]

    async def connect_mcp(self, signal: AbortSignal | None = None) -> list[Any]:
        """Connect every MCP server (lazy, idempotent); the per-server results. [] without servers."""
        if self._mcp is None:
            return []
        return await self._mcp.connect(signal)

    # --- background completion reports ---------------------------------------------------------

    def set_notice_listener(self, listener: BackgroundListener | None) -> None:
        """Attach the single listener for BackgroundEvents; buffered events are flushed to it."""
        self.notices.set_listener(listener)

    def drain_notices(self) -> list[BackgroundEvent]:
        """Take the events buffered while no listener is attached."""
        return self.notices.drain()

    # --- lifecycle ---------------------------------------------------------------------------

    def kill_all_commands(self) -> None:
        """Kill every running command process group without disposing the Environment."""
        self.command_sessions.kill_all()

    def dispose(self) -> None:
        if self._disposed:
            return
        self._disposed = True
        self.notices.dispose()
        self.command_sessions.dispose()
        subagents = self.services.subagent_sessions
        if subagents is not None and hasattr(subagents, "dispose"):
            try:
                subagents.dispose()
            except Exception as exc:  # dispose never throws: one log line, the rest still closes
                log.warning("[penguin] disposing subagent sessions failed: %s", exc)
        if self._mcp is not None:
            self._close_mcp_soon()

    def _close_mcp_soon(self) -> None:
        """Close the MCP clients: on the running loop when there is one, else right here."""
        mcp = self._mcp
        if mcp is None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        if loop is not None:
            self._mcp_close_task = loop.create_task(mcp.aclose())
            return
        with contextlib.suppress(Exception):
            asyncio.run(mcp.aclose())

    async def aclose(self) -> None:
        """`dispose()` plus an awaited MCP shutdown and command reaping (preferred from async
        code): when it returns, no process a command started is left."""
        self.dispose()
        wait_subagents = getattr(self.services.subagent_sessions, "wait_closed", None)
        if wait_subagents is not None:
            with contextlib.suppress(Exception):
                await wait_subagents()
        await asyncio.to_thread(self.command_sessions.wait_reaped)
        task = getattr(self, "_mcp_close_task", None)
        if task is not None:
            with contextlib.suppress(Exception):
                await task
