"""A void once the hand is counted: the hand is complete in the log, so it is scored whatever
signatures are missing, and a match it decides closes with its result (at every peer and in
`verify`), whatever the present parties agreed to. The final round itself is closed by its
entries only: a decided match closes once."""

from __future__ import annotations

import pytest
from session_helpers import same_logs
from walkout_helpers import router, stuck_at, until, void_out, withhold

from buraco_p2p.audit import EXIT_FAIR, render_text, verify_bytes
from buraco_p2p.logfile import encode_log
from buraco_p2p.session import HandEnded, MatchEnded, Phase, replay


@pytest.mark.parametrize("n", [2, 3, 4, 6])
def test_a_withheld_final_entry_leaves_a_decided_match_that_closes_once(n: int) -> None:
    """H withholds its `final` entry. The final round, once begun, is closed by its entries
    only: no present party can void it (4.5), so no two peers can close it two ways. The
    log is decided all the same: every peer has the scores and winner, and `verify` says
    decided (exit 0), naming H as the signature missing; H's late entry closes it, once."""
    r = router(n, 60 + n, target_score=300)
    h = 0
    present = list(range(1, n))
    withhold(r, [h], "final")
    r.start()
    stuck_at(r, present, Phase.FINAL)
    match = r.peers[1].table.match
    assert match is not None and match.over
    for p in present:
        t = r.peers[p].table
        assert not t.can_void((h,)) and not t.can_void((h,), 1)
        with pytest.raises(ValueError):
            r.peers[p].propose_void("end", r.now, (h,))
    log = [e.wire for e in r.peers[1].log]
    v = verify_bytes(encode_log(log))
    assert v.code == EXIT_FAIR, v.doc
    # (the log file holds the round up to the first entry missing: its author, then those
    # after it whose entries the peer holds but cannot apply before it)
    assert v.doc["ending"]["how"] == "decided" and v.doc["ending"]["silent"][0] == h
    assert (v.doc["scores"], v.doc["winner"]) == (list(match.scores), match.winner)
    assert "final round lacks the signatures of party 0" in render_text(v.doc)
    r.tamper = None
    late = next(e for e in r.peers[h].log if e.kind == "final" and e.author == h)
    r.inject(h, late.wire)
    r.run()
    for p in range(n):
        assert r.peers[p].table.closed, p
        assert MatchEnded(tuple(match.scores), match.winner) in r.events[p]
    assert same_logs(r, list(range(n)))


@pytest.mark.parametrize("n", [2, 4])
def test_withholding_the_result_does_not_erase_a_lost_hand(n: int) -> None:
    """The hand has been counted; H withholds its `result` entry and the others void it out:
    the hand is scored all the same (the dealer passes, the hand counts)."""
    r = router(n, 70 + n, target_score=5000)
    h = n - 1  # at two seats party 1 alone may not sign a void (4.5): party 0 is present
    present = list(range(n - 1))
    withhold(r, [h], "result")
    r.start()
    stuck_at(r, present, Phase.RESULT)
    t = r.peers[0].table
    assert t.match is not None and t.hand is not None and t.hand.result is not None
    points = t.hand.result.match_points
    dealer = t.match.dealer
    assert any(points) and t.hands_played == 0
    void_out(r, present, "void", (h,))
    for p in present:
        t = r.peers[p].table
        assert t.match is not None
        assert t.hands_played == 1 and list(t.match.scores) == list(points), p
        assert t.match.dealer != dealer
        assert [e for e in r.events[p] if isinstance(e, HandEnded)]
        assert t.phase is Phase.HAND_KEYS and t.hand is not None and t.hand.number == 1
        assert t.voids[0].stage == "scored" and t.voids[0].then == "next_hand"
    rep = replay(e.wire for e in r.peers[0].log)
    assert rep.hands == 1 and rep.scores == tuple(points)


def test_a_void_in_the_clocks_round_keeps_the_hand_scored() -> None:
    """A void in a timed match's round of clocks: the hand before it stays scored and the
    match goes on (the clocks of that round decide nothing)."""
    r = router(3, 81, minutes=1)
    withhold(r, [1], "time")
    r.start()
    until(r, lambda t: t.phase is Phase.TIME, party=0)
    stuck_at(r, [0, 2], Phase.TIME)
    scores = list(r.peers[0].table.match.scores)  # type: ignore[union-attr]
    void_out(r, [0, 2], "void", (1,))
    t = r.peers[0].table
    assert t.hands_played == 1 and t.match is not None and list(t.match.scores) == scores
    assert t.phase is Phase.HAND_KEYS and not t.match.time_is_up


def test_verify_says_a_match_closed_by_end_ended_by_agreement_and_who_was_named() -> None:
    """`end` in a round of clocks: the hand stays scored; `verify` says the match ended by the
    others' agreement, names the silent party, and calls no score final."""
    r = router(3, 82, minutes=1)
    withhold(r, [1], "time")
    r.start()
    until(r, lambda t: t.phase is Phase.TIME, party=0)
    stuck_at(r, [0, 2], Phase.TIME)
    void_out(r, [0, 2], "end", (1,))
    t = r.peers[0].table
    assert t.closed and t.hands_played == 1
    v = verify_bytes(encode_log([e.wire for e in t.log]))
    assert v.code == EXIT_FAIR
    assert v.doc["ending"]["how"] == "ended_by_agreement" and v.doc["ending"]["silent"] == [1]
    (void,) = v.doc["voids"]
    assert (void["action"], void["silent"], void["stage"], void["then"]) == (
        "end", [1], "scored", "closed")  # fmt: skip
    text = render_text(v.doc)
    assert "ended: by agreement of the others, without party 1 'player1'" in text
    assert "final score" not in text and "score when the match ended (no winner)" in text
    assert "void at entry" in text and "silent: party 1 'player1'" in text
