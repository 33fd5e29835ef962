"""describe_image (docs/tools.md "read_image and describe_image"): the text-only-model variant of read_image; one
request to the project's vision model, whose streamed text becomes the tool output."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated

from pydantic import Field

from ...interfaces import GenerativeModelParameters, LLMOutcome, VisionDescriberService
from ...omni import OmniMessage, image_url, user_text
from ...omni.models import PartialTextPayload
from ..tool_arguments import Headline, MaybeText, ReadsPath, Text
from ..tool_declaration import ToolArguments, ToolDeclaration
from ..types import ToolExecutionContext, ToolFailed, ToolResult
from .common import ToolBase, delta
from .image_loader import ImageLoadAborted, ImageLoadError, load_image
from .read_image import IMAGE_SOURCE, image_path

DEFAULT_PROMPT = "Describe this image in detail, including any visible text, numbers, UI elements and layout."
NO_VISION_MODEL = (
    "No vision model is configured for this project. The current model does not accept images; ask the "
    "user to pick a vision model in the model settings (vision_model) to enable image reading."
)


class DescribeImageArguments(ToolArguments):
    source: Annotated[Text, IMAGE_SOURCE, ReadsPath(may_be_url=True), Headline()]
    prompt: Annotated[
        MaybeText,
        Field(description="What to ask the vision model about the image (default: a detailed description)."),
        Headline(),
    ] = None


DESCRIBE_IMAGE = ToolDeclaration(
    name="describe_image",
    description=(
        "Get a text description of an image file or http(s) URL (png, jpeg, gif or webp, up to 5 MB). You "
        "cannot see images yourself: the project's vision model looks at it and answers in text. Use "
        "`prompt` to ask exactly what you need (transcribe the text, read a chart, find a button...)."
    ),
    arguments=DescribeImageArguments,
    permission="r",
    timeout_ms=90000,
    for_model="text-only",
)


class DescribeImageTool(ToolBase[DescribeImageArguments]):
    declaration = DESCRIBE_IMAGE

    def _describer(self, ctx: ToolExecutionContext) -> VisionDescriberService | None:
        services = ctx.services or self.services
        return services.vision_describer if services is not None else None

    async def run(self, arguments: DescribeImageArguments, ctx: ToolExecutionContext) -> AsyncIterator[OmniMessage | ToolResult]:
        describer = self._describer(ctx)
        if describer is None or describer.model_id is None or describer.create_llm is None:
            raise ToolFailed(NO_VISION_MODEL)
        try:
            image = await load_image(arguments.source, image_path(self.declaration, arguments, ctx), ctx.signal)
        except ImageLoadAborted:
            yield ToolResult(stop_reason="aborted")
            return
        except ImageLoadError as exc:
            raise ToolFailed(str(exc)) from None
        prompt = arguments.prompt if arguments.prompt and arguments.prompt.strip() else DEFAULT_PROMPT
        llm = describer.create_llm()
        stream = llm.stream_generate(
            GenerativeModelParameters(
                new_messages=[user_text(prompt), image_url(image.data_url)],
                signal=ctx.signal,
                thinking_level="none",
            )
        )
        yield delta(ctx, f"{image.mime}, {image.size_text} — described by {describer.model_id}:\n")
        streamed_any = False
        outcome: LLMOutcome | None = None
        async for item in stream:
            if isinstance(item, LLMOutcome):
                outcome = item
                continue
            payload = item.payload
            if isinstance(payload, PartialTextPayload) and payload.event_type == "delta" and payload.text:
                streamed_any = True
                yield delta(ctx, payload.text)
        if ctx.signal is not None and ctx.signal.aborted:
            yield ToolResult(stop_reason="aborted")
            return
        if outcome is None or outcome.status != "completed":
            status = outcome.status if outcome is not None else "failed"
            detail = f": {outcome.message}" if outcome is not None and outcome.message else ""
            prefix = "\n" if streamed_any else ""
            raise ToolFailed(f"{prefix}Vision model ({describer.model_id}) request {status}{detail}")
        if not streamed_any:
            yield delta(ctx, "[vision model returned no text]")

