"""UpstreamPump: buffered reading of one upstream stream (llm/upstream_pump.py)."""

from __future__ import annotations

import asyncio

import pytest

from penguin_jupyter.llm.upstream_pump import UpstreamPump


async def _numbers(count: int, reads: list[int], fail_at: int | None = None):
    for n in range(count):
        if n == fail_at:
            raise ConnectionError("dropped")
        reads.append(n)
        yield n
        await asyncio.sleep(0)


async def _drain(pump: UpstreamPump[int]) -> list[int]:
    taken: list[int] = []
    while await pump.wait(None, None):
        try:
            taken.append(pump.take())
        except StopAsyncIteration:
            return taken
    raise AssertionError("wait without abort or timeout returned False")


def test_delivers_every_event_in_order_then_the_end():
    async def main():
        reads: list[int] = []
        pump = UpstreamPump(_numbers(50, reads))
        assert await _drain(pump) == list(range(50))
        await pump.task

    asyncio.run(main())


def test_upstream_error_reaches_the_consumer_after_the_events_before_it():
    async def main():
        pump = UpstreamPump(_numbers(10, [], fail_at=3))
        taken = []
        with pytest.raises(ConnectionError, match="dropped"):
            while await pump.wait(None, None):
                taken.append(pump.take())
        assert taken == [0, 1, 2]

    asyncio.run(main())


def test_reader_pauses_at_the_run_ahead_limit_and_resumes_when_drained():
    async def main():
        reads: list[int] = []
        pump = UpstreamPump(_numbers(100, reads), run_ahead=8)
        for _ in range(20):
            await asyncio.sleep(0)
        assert len(reads) == 8  # paused: the consumer has taken nothing
        assert await _drain(pump) == list(range(100))

    asyncio.run(main())


def test_wait_returns_false_on_timeout_and_on_abort_without_losing_later_events():
    async def slow():
        await asyncio.sleep(0.3)
        yield "late"

    async def main():
        pump = UpstreamPump(slow())
        assert await pump.wait(None, 0.02) is False
        abort = asyncio.get_running_loop().create_future()
        asyncio.get_running_loop().call_later(0.02, abort.set_result, None)
        assert await pump.wait(abort, None) is False
        assert await pump.wait(None, None) is True
        assert pump.take() == "late"
        pump.task.cancel()

    asyncio.run(main())


def test_cancelling_the_reader_surfaces_as_a_cancelled_error_for_the_consumer():
    async def forever():
        await asyncio.sleep(3600)
        yield 1

    async def main():
        pump = UpstreamPump(forever())
        await asyncio.sleep(0)
        pump.task.cancel()
        assert await pump.wait(None, 1.0) is True
        with pytest.raises(asyncio.CancelledError):
            pump.take()

    asyncio.run(main())
