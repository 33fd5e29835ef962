"""Numbers of the subagent tools (docs/tools.md "Yield times", docs/subagents.md "Spawn rules", docs/subagents.md "Rounds").

Owns the yield-window defaults, the background capacity and the per-session buffer caps; the
clamp itself is `common.clamp_yield_ms`.
"""

from __future__ import annotations

# run_subagent window and input_subagent with a follow-up prompt.
DEFAULT_SUBAGENT_YIELD_MS = 300_000
# input_subagent with an empty prompt (a poll).
DEFAULT_SUBAGENT_POLL_YIELD_MS = 10_000
# Spawn admission cap on managed background subagents (running ones are never evicted).
MAX_BACKGROUND_SUBAGENTS = 8
# Buffered child messages per session (oldest dropped; the child's own Trace keeps everything).
MESSAGE_BUFFER_CAP = 4096
# Unread child text per session, in characters (oldest dropped with a marker).
TEXT_BUFFER_CAP = 1024 * 1024
TEXT_DROP_LABEL = "earlier subagent output"
# Registered sessions unused this long are released at the next registry access.
IDLE_REAP_S = 10 * 24 * 3600
SUBAGENT_ID_PREFIX = "subagent"
