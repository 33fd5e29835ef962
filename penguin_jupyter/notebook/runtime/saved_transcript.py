"""Showing a `%%penguin` cell's saved transcript again instead of asking the model.

Owns the cell-source form used to recognise an unchanged cell and the replay itself: the saved
bundle is checked (transcript/replay_bundle.py) and its validated messages are rebuilt into the
cell's output through `static_transcript`, the same redacted, no-fetch path a live Task ends
with; nothing else the saved cell held (its other outputs, its HTML, its plain text, its notes)
is shown again. One line says the model was not called, or why the bundle was not replayed, or
why the saved notebook could not be found at all (then the cell asks the model as usual). Deciding *whether* a cell qualifies is notebook_link.py's.
See docs/notebook-runtime.md "Replay".
"""

from __future__ import annotations

from collections.abc import Sequence

from ...redaction import Redactor
from ..transcript.replay_bundle import ReplayRefused, validate_replay_bundle
from ..transcript.saved_images import SavedBundle, with_saved_images
from ..transcript.transcript_bundle import TRANSCRIPT_MIME, static_transcript
from .user_lines import inform

RERUN_LINE = (
    "penguin: this cell's Task already completed and its source is unchanged, so the model was not "
    "called; the saved transcript is shown. Use %%penguin --rerun (or edit the cell) to ask again."
)


def penguin_cell_source(line: str, body: str) -> str:
    """The cell as the notebook stores it: the magic line and the body."""
    return f"%%penguin {line}".rstrip() + "\n" + body


def not_replayed_line(reason: str) -> str:
    return f"penguin: the saved transcript was not replayed ({reason}); asking the model."


def unknown_notebook_line(why: str) -> str:
    """Said before a cell that may have a saved transcript asks the model because its saved
    notebook could not be identified (a gateway kernel that heard from no page in time)."""
    return (
        f"penguin: asking the model: this cell's saved transcript could not be looked for ({why}; "
        'docs/deploying.md "Remote kernels and gateways")'
    )


def rebuilt_transcript(bundle: object, redactor: Redactor, images: Sequence[str] = ()) -> dict[str, object]:
    """The display mimebundle a replay shows for a saved `bundle` (its image references put back
    from `images` once the sizes allow); ReplayRefused (one line) when the bundle does not
    validate, or when rebuilding it nests too deeply or runs out of memory."""
    checked = validate_replay_bundle(bundle, images)
    try:
        return static_transcript(
            checked.messages,
            session_info=checked.session,
            status="completed",
            usage=checked.usage,
            redactor=redactor,
            decision_reasons=checked.decision_reasons,
            tools=checked.tools,
        )
    except RecursionError:
        raise ReplayRefused("the transcript is nested too deeply to show") from None
    except MemoryError:
        raise ReplayRefused("the transcript is too large to show") from None


def show_saved_transcript(saved: SavedBundle, redactor: Redactor) -> str | None:
    """Show the rebuilt transcript of a saved bundle (with RERUN_LINE); when it does not
    validate show nothing and return the one line saying why."""
    from IPython.display import display

    try:
        mimebundle = rebuilt_transcript(saved.bundle, redactor, saved.images)
    except ReplayRefused as exc:
        return not_replayed_line(str(exc))
    inform(RERUN_LINE)
    display(mimebundle, raw=True)
    return None


def transcript_bundle_of(mimebundle: dict[str, object]) -> dict[str, object] | None:
    """The bundle inside a finished cell's display mimebundle (what the kernel remembers), its
    images back from the `text/html` (`with_saved_images`)."""
    bundle = with_saved_images(mimebundle.get(TRANSCRIPT_MIME), mimebundle.get("text/html"))
    return bundle if isinstance(bundle, dict) else None
