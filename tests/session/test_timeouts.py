"""A silent party: timeouts from the clock readings the peers are handed, then a signed
void agreement of the others that voids the hand or ends the match, in the log."""

from __future__ import annotations

import pytest
from session_helpers import faults, forge, identities, same_logs, snapshot, table

from buraco_p2p.engine import Discard
from buraco_p2p.session import (
    Fault,
    HandStarted,
    MatchEnded,
    Phase,
    Router,
    TimedOut,
    Voided,
    check_equivocation,
    decode_entry,
    make_entry,
    replay,
)


def _timed_out(r: Router, party: int) -> list[TimedOut]:
    return [e for e in r.events[party] if isinstance(e, TimedOut)]


def test_a_party_that_never_commits_is_named_then_the_others_end_the_match() -> None:
    r = table("us", seed=11, timeout_ms=1000)
    r.silent = {2}
    r.start()
    r.run()
    r.advance(0.5)
    assert not any(_timed_out(r, p) for p in (0, 1, 3))
    r.advance(1.0)
    for p in (0, 1, 3):
        (ev,) = _timed_out(r, p)
        assert ev.parties == (2,) and ev.waited >= 1.0
    r.advance(5.0)
    assert all(len(_timed_out(r, p)) == 1 for p in (0, 1, 3))  # reported once per step
    for p in (0, 1, 3):
        r.act(p, r.peers[p].propose_void("end", r.now))
    r.run()
    for p in (0, 1, 3):
        assert r.peers[p].table.closed
        assert [e for e in r.events[p] if isinstance(e, Voided)] == [Voided("end", (2,))]
    assert same_logs(r, [0, 1, 3])
    rep = replay(e.wire for e in r.peers[0].log)
    assert rep.closed and rep.hands == 0


def test_a_player_that_stops_moving_gets_the_hand_voided_and_dealt_again() -> None:
    r = table("us", seed=12, timeout_ms=1000)
    r.manual = {0, 1, 2, 3}
    r.start()
    r.run()
    stalled = r.turns[-1]
    others = [p for p in range(4) if p != stalled]
    r.advance(2.0)
    for p in others:
        assert _timed_out(r, p)[0].parties == (stalled,)
    for p in others:
        r.act(p, r.peers[p].propose_void("void", r.now))
    r.run()
    # every party, the stalled one included, applies the agreement and deals again
    assert same_logs(r, [0, 1, 2, 3])
    for p in range(4):
        assert [e for e in r.events[p] if isinstance(e, Voided)] == [Voided("void", (stalled,))]
        assert len([e for e in r.events[p] if isinstance(e, HandStarted)]) == 2
        assert r.peers[p].table.phase is Phase.TURN
    assert not replay(e.wire for e in r.peers[1].log).closed


def test_after_a_fault_the_honest_parties_deal_again_without_its_author_at_once() -> None:
    """A refused entry stops the table: every present party signs, with nobody proposing and
    no timeout, the void there that deals again without its author (its partner signs it,
    so the walk-out is proven and its side charged); one log at every honest peer."""
    r = table("us", seed=13)
    r.manual = {0, 1, 2, 3}
    r.start()
    r.run()
    cheater = r.turns[-1]
    t = r.peers[cheater].table
    assert t.view is not None and t.my_seat is not None
    victim = t.view.hand((t.my_seat + 1) % 4)[0]
    entry = forge(r, cheater, "move", {"m": Discard(t.my_seat, victim).to_wire(), "shares": None})
    honest = [p for p in range(4) if p != cheater]
    for p in honest:
        r.act(p, r.peers[p].receive(entry.wire, r.now))
        assert faults(r, p)
    r.silent = {cheater}
    r.run()
    for p in honest:
        assert Voided("void", (cheater,)) in r.events[p]
        (rec,) = r.peers[p].table.voids
        assert rec.index == entry.index + 2 and rec.proven == (cheater,)
    assert same_logs(r, honest)
    assert len(replay(e.wire for e in r.peers[honest[0]].log).table.voids) == 1


def test_a_void_cannot_name_a_party_the_table_is_not_waiting_for() -> None:
    r = table("us", seed=14, timeout_ms=1000)
    r.silent = {2}
    r.start()
    r.run()
    snap = snapshot(r)
    # naming party 1, who has committed: nobody agrees to it, not even the proposer
    with pytest.raises(ValueError, match="not waiting for"):
        snap.peers[0].propose_void("end", snap.now, silent=(1,))
    assert snap.peers[0].agreement is None
    # a whole round of void entries naming party 1, signed by 0, 2 and 3: refused by all
    t = snap.peers[0].table
    for k, p in enumerate((0, 2, 3)):
        e = make_entry(
            identities()[p], table=t.terms.table_id, index=len(t.log) + k, prev=t.void_prev(),
            author=p, kind="void", body={"action": "end", "silent": [1]},
        )  # fmt: skip
        snap.inject(p, e.wire)
    snap.run()
    for p in (0, 1, 3):
        assert not snap.peers[p].table.closed
        assert not any(isinstance(e, MatchEnded) for e in snap.events[p])
        assert all(e.kind != "void" for e in snap.peers[p].log)


@pytest.mark.parametrize("kind", ["reveal", "keys", "deal", "shares"])
def test_a_withheld_entry_is_named_after_the_timeout(kind: str) -> None:
    """A party that keeps back its seat-draw nonce, its hand key, its deal shares or its
    shares for a drawn card is named by every other peer once the limit has passed."""
    culprit = 1

    def tamper(sender: int, receiver: int, data: bytes) -> bytes | None:
        if sender == culprit and decode_entry(data).kind == kind:
            return None
        return data

    r = table("us", seed=15, timeout_ms=1000, tamper=tamper)
    r.start()
    r.run()
    waiting = [p for p in range(4) if p != culprit and r.peers[p].table.waiting_for]
    assert waiting
    r.advance(2.0)
    for p in waiting:
        (ev,) = _timed_out(r, p)
        assert ev.parties == (culprit,)


def test_an_entry_the_void_overtook_is_no_equivocation() -> None:
    """A void agreement may take the index of a round entry a present party had already
    made: party 2's commitment and its void both stand at index 3 when party 1 is silent.
    Heard late, after the void, the commitment is a stale entry, not two signatures of one
    party's for one index: nobody is accused and the table goes on."""
    held_back: list[bytes] = []

    def tamper(sender: int, receiver: int, data: bytes) -> bytes | None:
        if sender == 2 and receiver == 0 and decode_entry(data).kind == "commit":
            held_back.append(data)
            return None
        return data

    r = table("us", seed=12, timeout_ms=1000, tamper=tamper)
    r.silent = {1}
    r.start()
    r.run()
    r.advance(2.0)
    for p in (0, 2, 3):
        r.act(p, r.peers[p].propose_void("end", r.now, silent=(1,)))
    r.run()
    assert all(r.peers[p].table.closed for p in (0, 2, 3))
    assert same_logs(r, [0, 2, 3])
    (late,) = held_back
    stale = decode_entry(late)
    void = r.peers[0].log[stale.index]
    assert void.kind == "void" and void.author == stale.author == 2
    out = r.peers[0].receive(late, r.now)
    assert not [e for e in out.events if isinstance(e, Fault)]
    assert not faults(r, 0)
    with pytest.raises(ValueError, match="not two different entries"):
        check_equivocation(r.peers[0].log[0], void.wire, late)
