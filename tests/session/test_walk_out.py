"""Walking out never pays: a party that withholds an entry once it could see its cards (the deal
onwards) and is voided out has abandoned the hand. A partner's signature on the void proves
it, and the side is charged; where only opponents name it, nothing is proven, nobody is
charged, and the walker gets no redeal: the match ends there."""

from __future__ import annotations

import pytest
from session_helpers import bot_chooser
from walkout_helpers import partner_of, router, stuck_at, void_out, withhold

from buraco_p2p.audit import EXIT_FAIR, render_text, verify_bytes
from buraco_p2p.logfile import encode_log
from buraco_p2p.net.channel.identity import Identity
from buraco_p2p.session import (
    Abandoned,
    HandStarted,
    MatchEnded,
    Phase,
    Router,
    decode_entry,
    replay,
)


def _deal_withheld(n: int, seed: int, walkers: list[int], **rules: object) -> Router:
    """`walkers` open their own cards from the others' `deal` entries and withhold theirs."""
    r = router(n, seed, target_score=3000, **rules)
    withhold(r, walkers, "deal")
    r.start()
    present = [p for p in range(n) if p not in walkers]
    stuck_at(r, present, Phase.DEAL)
    for w in walkers:
        t = r.peers[w].table
        assert t.view is not None and t.my_seat is not None  # the walker saw its hand
        # its 11 dealt cards are open to it (it may have drawn one more it cannot open)
        assert sum(t.view.known[s] >= 0 for s in t.view.hand(t.my_seat)) >= 11
    return r


@pytest.mark.parametrize(("n", "teams"), [(4, 2), (6, 3), (6, 2)])
def test_peeking_then_walking_out_costs_the_walkers_side(n: int, teams: int) -> None:
    """H sees its 11 cards and withholds its deal entry; its partner co-signs the void: the
    side is charged the target score, the same dealer deals again, the hand does not count."""
    r = _deal_withheld(n, 90 + n + teams, [0], **({"teams": teams} if n == 6 else {}))
    t = r.peers[1].table
    assert t.match is not None
    partner = partner_of(t, 0)
    assert partner is not None
    side = t.match.side_of(t.party_seat[0])
    dealer = t.match.dealer
    present = list(range(1, n))
    void_out(r, present, "void", (0,))
    for p in present:
        t = r.peers[p].table
        assert t.match is not None and not t.closed
        expected = [0] * len(t.match.scores)
        expected[side] = -3000
        assert list(t.match.scores) == expected, p
        assert Abandoned(0, (0,), (side,), 3000) in r.events[p]
        assert t.match.dealer == dealer and t.hands_played == 0
        assert t.hand is not None and t.hand.number == 1
        (rec,) = t.voids
        assert (rec.stage, rec.proven, rec.charged, rec.then) == ("in_hand", (0,), (side,),
                                                                 "next_hand")  # fmt: skip
    rep = replay(e.wire for e in r.peers[1].log)
    assert rep.scores[side] == -3000 and not rep.closed


@pytest.mark.parametrize("n", [2, 3])
def test_with_no_partner_to_prove_it_the_walker_gets_no_redeal_and_nobody_pays(n: int) -> None:
    """At two and three seats only opponents can name the walker: their word proves nothing,
    so nobody is charged, and the void that would deal again ends the match instead. (The
    walker is the last party: at two seats party 1 alone may not sign a void, 4.5.)"""
    w = n - 1
    r = _deal_withheld(n, 100 + n, [w])
    present = list(range(n - 1))
    void_out(r, present, "void", (w,))
    for p in present:
        t = r.peers[p].table
        assert t.closed and t.match is not None, p
        assert list(t.match.scores) == [0] * n
        assert not [e for e in r.events[p] if isinstance(e, Abandoned)]
        assert len([e for e in r.events[p] if isinstance(e, HandStarted)]) == 0
        assert MatchEnded(tuple([0] * n), None) in r.events[p]
        (rec,) = t.voids
        assert (rec.stage, rec.proven, rec.then) == ("in_hand", (), "closed")
    v = verify_bytes(encode_log([e.wire for e in r.peers[0].log]))
    assert v.code == EXIT_FAIR
    assert v.doc["ending"] == {"how": "abandoned", "by": [w], "proven": [], "silent": [w],
                               "index": len(r.peers[0].log) - 1}  # fmt: skip
    assert f"named by opponents only, nothing proven: party {w}" in render_text(v.doc)


def test_walking_out_mid_play_costs_the_side_too() -> None:
    """The same once the hand is under way: the mover walks out on its turn at four seats."""
    r = router(4, 111, target_score=3000)
    r.manual = {0, 1, 2, 3}
    r.start()
    r.run()
    mover = r.turns[-1]
    present = [p for p in range(4) if p != mover]
    void_out(r, present, "end", (mover,))
    t = r.peers[present[0]].table
    assert t.closed and t.match is not None
    side = t.match.side_of(t.party_seat[mover])
    assert t.match.scores[side] == -3000 and t.match.scores[1 - side] == 0
    assert t.voids[0].then == "closed" and t.voids[0].proven == (mover,)
    v = verify_bytes(encode_log([e.wire for e in t.log]))
    assert v.doc["ending"]["how"] == "abandoned" and v.doc["ending"]["proven"] == [mover]
    assert "proven by a partner's signature" in render_text(v.doc)


@pytest.mark.parametrize(("n", "teams"), [(2, 2), (3, 3), (4, 2), (6, 3)])
def test_a_hostile_coalition_cannot_make_an_honest_present_side_pay(n: int, teams: int) -> None:
    """The reverse abuse: the hostile parties drop the honest side's deal entries and sign a
    void naming every honest player (present and playing). Their log verifies, but it
    proves nothing against the honest side: nobody is charged and the match just ends."""
    r = router(n, 120 + n, target_score=3000, **({"teams": teams} if n == 6 else {}))
    r.start()
    t0 = r.peers[0].table
    while r.queue and t0.phase is not Phase.DEAL:
        r.run(1)
    assert t0.match is not None
    # the honest side is one without party 0: of two halves, only the one with party 0 may
    # sign a void (4.5), so this is the case where the hostile parties can close the match
    side0 = t0.match.side_of(t0.party_seat[0])
    honest_side = next(s for p in range(n) if (s := t0.match.side_of(t0.party_seat[p])) != side0)
    honest = [p for p in range(n) if t0.match.side_of(t0.party_seat[p]) == honest_side]
    hostile = [p for p in range(n) if p not in honest]

    def tamper(sender: int, receiver: int, data: bytes) -> bytes | None:
        e = decode_entry(data)
        if sender in honest and receiver in hostile and e.kind == "deal":
            return None
        return data

    r.tamper = tamper
    r.run()
    for p in hostile:
        assert r.peers[p].table.phase is Phase.DEAL
        assert set(r.peers[p].table.waiting_for) >= set(honest)
    stuck = tuple(sorted(honest))
    r.advance(2.0)
    for p in hostile:
        r.act(p, r.peers[p].propose_void("void", r.now, silent=stuck))
    r.run()
    log = r.peers[hostile[0]].log
    t = r.peers[hostile[0]].table
    assert t.closed and t.match is not None
    assert list(t.match.scores) == [0] * len(t.match.scores)
    assert t.voids[0].proven == () and t.voids[0].charged == ()
    v = verify_bytes(encode_log([e.wire for e in log]))
    assert v.code == EXIT_FAIR and v.doc["abandoned"] == []
    assert v.doc["ending"]["proven"] == [] and v.doc["winner"] is None


def test_at_three_seats_a_new_partner_proves_it_once_the_first_pot_is_taken() -> None:
    """At three seats each player is alone until the first pot is taken; then the other two
    are partners, and a partner walking out while the other signs is charged, both of them
    (match scores are per player)."""
    r = router(3, 131, target_score=3000)
    r.manual = {0, 1, 2}
    r.start()
    r.run()
    choose = bot_chooser(131)
    walker = -1
    for _ in range(3000):
        mover = r.turns[-1]
        view = r.peers[mover].table.view
        assert view is not None and not view.ended
        change = view.side_change
        if change is not None and view.turn in change.partners:
            walker = mover
            break
        r.act(mover, r.peers[mover].play(choose(mover, view), r.now))
        r.run()
    assert walker >= 0
    t = r.peers[walker].table
    assert t.view is not None and t.view.side_change is not None
    seats = t.view.side_change.partners
    partner = next(p for p in range(3) if p != walker and t.party_seat[p] in seats)
    present = [p for p in range(3) if p != walker]
    void_out(r, present, "end", (walker,))
    t = r.peers[partner].table
    assert t.closed and t.match is not None
    expected = [0, 0, 0]
    for seat in seats:
        expected[seat] = -3000
    assert list(t.match.scores) == expected
    assert t.voids[0].proven == (walker,) and t.voids[0].charged == tuple(sorted(seats))


def test_an_unproven_walker_replaced_is_gone_and_nobody_pays() -> None:
    """At two seats the opponent may still give the walker's seat to a new identity: the
    hand is dealt again to it (the walker has no seat to come back to), and nobody is charged."""
    r = _deal_withheld(2, 141, [1])
    heir = Identity.from_seed(b"\x78" * 32, "heir").public.raw
    r.silent = {1}
    r.advance(2.0)
    r.act(0, r.peers[0].propose_void("replace", r.now, (1,), (heir,)))
    r.run()
    t = r.peers[0].table
    assert not t.closed and t.match is not None and list(t.match.scores) == [0, 0]
    assert t.keys[1].raw == heir and t.hand is not None and t.hand.number == 1
    (rec,) = t.voids
    assert (rec.stage, rec.proven, rec.charged, rec.then) == ("in_hand", (), (), "next_hand")


def test_withholding_the_count_after_the_opponents_went_out_costs_the_side() -> None:
    """Play has ended but H withholds its shares for the count: no card left in a hand can be
    opened, so the hand cannot be scored; H's partner signs the void, and the side pays
    more than any hand could cost it."""
    r = router(4, 151, target_score=3000)
    withhold(r, [0], "end")
    r.start()
    stuck_at(r, [1, 2, 3], Phase.COUNT)
    void_out(r, [1, 2, 3], "void", (0,))
    t = r.peers[1].table
    assert t.match is not None
    side = t.match.side_of(t.party_seat[0])
    assert t.match.scores[side] == -3000 and t.hands_played == 0
    assert t.voids[0].phase == "count" and t.voids[0].proven == (0,)
