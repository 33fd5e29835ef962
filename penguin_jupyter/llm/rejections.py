"""The same refusal twice in a row is permanent (docs/model.md "A request the provider refuses").

A provider's 4xx that is neither an auth error nor one that passes (429, 408…) answers the
request itself: a history the provider will not take (an unpaired tool call, an orphan tool
result, a reasoning item missing) is refused the same way however often it is sent. The engine
retries a `failed` outcome through its whole backoff ladder (about a minute), so such a session
would spend that minute on every Task and never complete one. Owns `RepeatedRejection`: a
model's memory of its last refusal; the second identical refusal in a row is marked permanent
and says how to go on. A first refusal is still retried once (the spec's "a bare 403 retries");
any other outcome forgets it.
"""

from __future__ import annotations

from ..interfaces import LLMOutcome
from .classify import provider_failure

REPEATED_REJECTION_GUIDANCE = (
    "the provider refused this conversation twice the same way, so it is not retried; start a new "
    "session (%penguin new in a notebook), or, for a resumed session, remove the trace line the "
    "refusal names (%penguin trace prints the file) and resume"
)


class RepeatedRejection:
    def __init__(self) -> None:
        self._last: str | None = None

    def judge(self, error: BaseException, outcome: LLMOutcome) -> LLMOutcome:
        """`outcome` for `error`, permanent when the provider refused the last request the same way."""
        failure = provider_failure(error)
        refused = (
            outcome.status == "failed"
            and not outcome.permanent
            and failure is not None
            and failure.status is not None
            and 400 <= failure.status < 500
            and not failure.is_auth
            and not failure.is_retryable
        )
        if not refused:
            self._last = None
            return outcome
        if outcome.message != self._last:
            self._last = outcome.message
            return outcome
        return LLMOutcome("failed", f"{outcome.message} — {REPEATED_REJECTION_GUIDANCE}", permanent=True)

    def forget(self) -> None:
        """Any other end of a request (completed, timed out, aborted…): the next refusal is a first."""
        self._last = None
