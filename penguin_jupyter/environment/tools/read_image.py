"""read_image (docs/tools.md "read_image and describe_image"): load an image for a vision model and return it as a
data URL in the result's images."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from ...interfaces import EnvironmentServices
from ...omni import OmniMessage
from ..types import ToolDefinitionConfig, ToolExecutionContext, ToolResult
from .common import ToolBase, delta, missing_argument
from .image_loader import ImageLoadAborted, ImageLoadError, load_image

READ_IMAGE_NAME = "read_image"


class ReadImageTool(ToolBase):
    async def execute(
        self, args: dict[str, Any], ctx: ToolExecutionContext
    ) -> AsyncIterator[OmniMessage | ToolResult]:
        source = args.get("source")
        if not isinstance(source, str) or not source.strip():
            yield delta(ctx, missing_argument("source", self.name))
            yield ToolResult(stop_reason="failed")
            return
        try:
            image = await load_image(source, ctx.workspace_dir, ctx.signal)
        except ImageLoadAborted:
            yield ToolResult(stop_reason="aborted")
            return
        except ImageLoadError as exc:
            yield delta(ctx, str(exc))
            yield ToolResult(stop_reason="failed")
            return
        yield delta(ctx, f"{image.mime}, {image.size_text}")
        yield ToolResult(images=[image.data_url])


def create_read_image_tool(
    definition: ToolDefinitionConfig, services: EnvironmentServices | None = None
) -> ReadImageTool:
    return ReadImageTool(definition, services)
