"""A real MCP server for the MCP tests, written with the SDK's `MCPServer` (ex-FastMCP).

Tools cover what the client bridge must map: text (`echo`, read-only), a tool-level error
(`fail`), image content (`pic`), a slow call (`slow`), env/cwd probing (`probe`), long
output (`spam`) and a name unusable for LLM APIs (`dot.name`).

Modes (argv): none = stdio; `--extra` adds more result shapes; `--slow-start` waits 3 s first; `--crash` writes to stderr and exits before the handshake;
`--hang` never answers; `--http PORT` / `--sse PORT` serve on 127.0.0.1, appending the
`x-penguin-test` request header of every request to the file named by `--header-log PATH`.
"""

from __future__ import annotations

import os
import sys
import time

import anyio
from mcp.server.mcpserver import MCPServer
from mcp_types import (
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
    TextResourceContents,
    ToolAnnotations,
)

PNG_1X1 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="

server = MCPServer(name="penguin-test-fixture", version="1.0.0", log_level="ERROR")


@server.tool(description="Echoes back the input text.", annotations=ToolAnnotations(read_only_hint=True))
def echo(text: str) -> str:
    return f"echo: {text}"


@server.tool(description="Always reports a tool-level error.")
def fail() -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text="boom")], is_error=True)


@server.tool(description="Returns a 1x1 PNG plus a caption.")
def pic() -> CallToolResult:
    return CallToolResult(
        content=[
            TextContent(type="text", text="a tiny image"),
            ImageContent(type="image", data=PNG_1X1, mime_type="image/png"),
        ]
    )


@server.tool(description="Waits the requested milliseconds.")
async def slow(ms: float) -> str:
    await anyio.sleep(ms / 1000)
    return "done"


@server.tool(description="Reports FIXTURE_SECRET and the process cwd.")
def probe() -> str:
    return f"{os.environ.get('FIXTURE_SECRET', '')}|{os.getcwd()}"


@server.tool(description="Returns 500 characters.")
def spam() -> str:
    return "x" * 500


@server.tool(name="dot.name", description="Unusable as an LLM tool name.")
def dot_name() -> str:
    return "never callable"


def _register_extra_tools() -> None:
    """`--extra`: result shapes beyond the six scenario tools (counts then differ)."""

    @server.tool(description="Fails with no content at all.")
    def quiet_fail() -> CallToolResult:
        return CallToolResult(content=[], is_error=True)

    @server.tool(description="Structured content only.")
    def structured() -> CallToolResult:
        return CallToolResult(content=[], structured_content={"a": 1, "b": ["x"]})

    @server.tool(description="Audio, a resource link and embedded resources.")
    def mixed() -> CallToolResult:
        return CallToolResult(
            content=[
                AudioContent(type="audio", data="QUFB", mime_type="audio/wav"),
                ResourceLink(type="resource_link", uri="file:///x", name="x", description="a file"),
                EmbeddedResource(
                    type="resource", resource=TextResourceContents(uri="mem://t", text="embedded")
                ),
                EmbeddedResource(
                    type="resource", resource=BlobResourceContents(uri="mem://b", blob="Q0NDQw==")
                ),
            ]
        )

    @server.tool(description="Writes the text 30 times to stderr (more than a pipe holds), then echoes.")
    def noisy(text: str) -> str:
        for _ in range(30):
            print(f"noisy: {text}", file=sys.stderr, flush=True)
        return text


def _register_writer() -> None:
    """`--writer`: one tool that writes a file where it is told (the sandbox tests)."""

    @server.tool(description="Writes text to a file; answers ok or the error.")
    def write(path: str, text: str) -> str:
        try:
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(text)
        except OSError as exc:
            return f"error: {exc.strerror}"
        return "ok"


def _header_logging(app, path: str):
    async def logged(scope, receive, send):
        if scope.get("type") == "http":
            headers = dict(scope.get("headers") or [])
            with open(path, "a", encoding="utf-8") as log:
                log.write(headers.get(b"x-penguin-test", b"<missing>").decode() + "\n")
        await app(scope, receive, send)

    return logged


def _serve(kind: str, port: int, header_log: str) -> None:
    import uvicorn

    app = server.streamable_http_app() if kind == "--http" else server.sse_app()
    config = uvicorn.Config(_header_logging(app, header_log), host="127.0.0.1", port=port, log_level="error")
    uvicorn.Server(config).run()


def main(argv: list[str]) -> None:
    if "--crash" in argv:
        print("fixture exploding on purpose", file=sys.stderr, flush=True)
        sys.exit(3)
    if "--hang" in argv:
        while True:
            time.sleep(3600)
    if "--slow-start" in argv:
        time.sleep(3)  # keeps a connect attempt pending long enough to abort it
    if "--extra" in argv:
        _register_extra_tools()
    if "--writer" in argv:
        _register_writer()
    for kind in ("--http", "--sse"):
        if kind in argv:
            port = int(argv[argv.index(kind) + 1])
            header_log = argv[argv.index("--header-log") + 1]
            _serve(kind, port, header_log)
            return
    server.run("stdio")


if __name__ == "__main__":
    main(sys.argv[1:])
