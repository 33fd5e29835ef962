"""read_image (docs/tools.md "read_image and describe_image"): load an image for a vision model and return it as a
data URL in the result's images."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated, Any

from pydantic import Field

from ...omni import OmniMessage
from ..tool_arguments import Headline, NonBlankText, ReadsPath
from ..tool_declaration import ToolArguments, ToolDeclaration
from ..types import ToolExecutionContext, ToolFailed, ToolResult
from .common import ToolBase, delta
from .image_loader import ImageLoadAborted, ImageLoadError, load_image

# An image argument: a path the tool reads, or an http(s) URL it fetches.
IMAGE_SOURCE = Field(description="Image path or http(s) URL.")


def image_path(declaration: ToolDeclaration[Any], arguments: ToolArguments, ctx: ToolExecutionContext) -> str | None:
    """The file an image call reads (as its effect resolves `source`); None for a URL."""
    reads = declaration.effect_of(arguments, ctx.workspace_dir).reads
    return reads[0].resolved if reads else None


class ReadImageArguments(ToolArguments):
    source: Annotated[NonBlankText, IMAGE_SOURCE, ReadsPath(may_be_url=True), Headline()]


READ_IMAGE = ToolDeclaration(
    name="read_image",
    description="Look at an image file or http(s) URL (png, jpeg, gif or webp, up to 5 MB).",
    arguments=ReadImageArguments,
    permission="r",
    timeout_ms=60000,
    for_model="vision",
)


class ReadImageTool(ToolBase[ReadImageArguments]):
    declaration = READ_IMAGE

    async def run(self, arguments: ReadImageArguments, ctx: ToolExecutionContext) -> AsyncIterator[OmniMessage | ToolResult]:
        try:
            image = await load_image(arguments.source, image_path(self.declaration, arguments, ctx), ctx.signal)
        except ImageLoadAborted:
            yield ToolResult(stop_reason="aborted")
            return
        except ImageLoadError as exc:
            raise ToolFailed(str(exc)) from None
        yield delta(ctx, f"{image.mime}, {image.size_text}")
        yield ToolResult(images=[image.data_url])

