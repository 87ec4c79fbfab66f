"""Running out of file descriptors on accept: one warning, one "accepting again", and a
host that starves again within a minute of its last warning does not repeat either.

The listener here fails `accept` on a script (the real starvation, a host flooded past its
descriptor limit, is tried end to end in tests/net/test_cli.py); the clock is trio's
virtual one, so the minute between warnings costs nothing.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Sequence

import trio
import trio.testing

from buraco_p2p.net.channel.identity import Identity
from buraco_p2p.net.channel.server import LinkServer

_FAIL = "fail"
_STREAM = "stream"
_WAIT = "wait"


class _Scripted(trio.abc.Listener[trio.abc.Stream]):
    """A listener whose `accept` follows `steps`: fail with EMFILE, hand over a stream, or
    let time pass first; then it waits for ever."""

    def __init__(self, steps: Sequence[tuple[str, float]]) -> None:
        self.steps = list(steps)

    async def accept(self) -> trio.abc.Stream:
        while self.steps:
            kind, seconds = self.steps.pop(0)
            if kind == _WAIT:
                await trio.sleep(seconds)
            elif kind == _FAIL:
                raise OSError(errno.EMFILE, os.strerror(errno.EMFILE))
            else:
                return trio.testing.memory_stream_pair()[0]
        await trio.sleep_forever()
        raise AssertionError("unreachable")

    async def aclose(self) -> None:
        pass


async def _serve(steps: Sequence[tuple[str, float]]) -> tuple[list[str], int]:
    """The warnings the server gave while its listener followed `steps`, and the streams it
    took."""
    warnings: list[str] = []
    taken: list[trio.abc.Stream] = []

    async def handler(link: object) -> None:
        raise AssertionError("no handshake runs here")

    server = LinkServer(
        Identity.generate("host"),
        handler,
        room_secret=bytes(16),
        table_id=b"starved-table",
        on_warning=warnings.append,
    )

    def divert(stream: trio.abc.Stream) -> bool:
        taken.append(stream)
        return True  # taken here: no handshake to run

    server.divert = divert
    listener = _Scripted(steps)
    async with trio.open_nursery() as nursery:
        await nursery.start(server.serve, [listener])
        await trio.sleep(3600)
        nursery.cancel_scope.cancel()
    assert not listener.steps
    return warnings, len(taken)


async def test_a_starved_accept_is_told_once_and_its_end_once(
    autojump_clock: trio.testing.MockClock,
) -> None:
    warnings, taken = await _serve([(_FAIL, 0), (_FAIL, 0), (_FAIL, 0), (_STREAM, 0)])
    assert taken == 1
    assert len(warnings) == 2
    assert "cannot accept connections" in warnings[0]
    assert "out of file descriptors" in warnings[0]
    assert warnings[1] == "accepting connections again"


async def test_starving_again_within_a_minute_of_the_warning_is_not_told_again(
    autojump_clock: trio.testing.MockClock,
) -> None:
    steps = [
        (_FAIL, 0), (_STREAM, 0),  # told, and its end
        (_WAIT, 20), (_FAIL, 0), (_FAIL, 0), (_STREAM, 0),  # 20 s later: neither
        (_WAIT, 30), (_FAIL, 0), (_STREAM, 0),  # 50 s after the warning: neither
        (_WAIT, 15), (_FAIL, 0), (_STREAM, 0),  # 65 s after it: told again, and its end
    ]  # fmt: skip
    warnings, taken = await _serve(steps)
    assert taken == 4
    assert [w.split(":")[0] for w in warnings] == [
        "cannot accept connections",
        "accepting connections again",
        "cannot accept connections",
        "accepting connections again",
    ]
