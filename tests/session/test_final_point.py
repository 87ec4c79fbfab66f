"""The settled and the final point of a peer's log (docs/protocol.md 4.6): an entry is
settled once every party has built on it, and final once every party has built on a step
before which it was settled. Both are counted here again from the entries alone, by the
words of the spec, and set against what the peers count as a match is played."""

from __future__ import annotations

import bisect

from session_helpers import table

from buraco_p2p.session import Table


def _cover(t: Table, length: int) -> list[int]:
    """Each party's cover in the log's first `length` entries (a log with no void round):
    the start of the step of its latest entry there, 1 for a party with none."""
    out = [1] * t.n
    for e in t.log[1:length]:
        out[e.author] = t.steps[bisect.bisect_right(t.steps, e.index) - 1]
    return out


def _settled(t: Table, length: int) -> int:
    return min(_cover(t, length))


def _final(t: Table) -> int:
    return min(_settled(t, c) for c in _cover(t, len(t.log)))


def test_an_entry_is_final_a_step_after_it_is_settled() -> None:
    r = table("us", seed=5)
    r.start()
    seen: dict[int, tuple[int, int]] = {}
    lagged = False
    for _ in range(900):
        if not r.queue:
            break
        r.run(1)
        for p, peer in enumerate(r.peers):
            t = peer.table
            if t.voids or t.closed:
                continue
            settled, final = peer.settled, peer.final
            assert settled == _settled(t, len(t.log)), p
            assert final == _final(t), p
            assert final <= settled
            was = seen.get(p, (0, 0))
            assert settled >= was[0] and final >= was[1], p  # neither point goes back
            seen[p] = (settled, final)
            lagged = lagged or final < settled
    assert lagged  # final is a step behind settled, not the same line
    assert min(f for _, f in seen.values()) > 20  # and it moves on as the hand is played
