"""Whole hands and matches among four in-memory session peers, all crypto on."""

from __future__ import annotations

import dataclasses

import pytest
from session_helpers import bot_chooser, faults, identities, same_logs, table

from buraco_p2p.crypto import DeterministicRandomSource
from buraco_p2p.engine import Discard, RefereeView
from buraco_p2p.rules import get_preset
from buraco_p2p.session import (
    CardSeen,
    HandEnded,
    HandStarted,
    MatchEnded,
    MoveApplied,
    Peer,
    Phase,
    Router,
    SeatsDrawn,
    decode_entry,
    make_genesis,
    replay,
)

PRESETS = ["us", "classic", "italian", "fechado", "playingcards"]


def _short_match(preset: str, seed: int) -> Router:
    rules = dataclasses.replace(get_preset(preset), target_score=300)
    g = make_genesis(b"short-match-tabl", identities(), rules)
    peers = [Peer(g, i, DeterministicRandomSource(bytes([seed, n]) * 16)) for n, i in
             enumerate(identities())]  # fmt: skip
    return Router(peers, bot_chooser(seed))


def test_a_whole_match_gives_byte_identical_logs_that_replay(played_match: Router) -> None:
    r = played_match
    peers = r.peers
    assert all(p.table.phase is Phase.CLOSED for p in peers)
    assert same_logs(r, [0, 1, 2, 3])
    assert all(not faults(r, p) for p in range(4))
    # what each peer persisted is its log, in order, genesis aside
    assert all([e.wire for e in r.persisted[p]] == [e.wire for e in peers[p].log[1:]] for p in
               range(4))  # fmt: skip
    ends = [e for e in r.events[0] if isinstance(e, MatchEnded)]
    assert len(ends) == 1 and ends[0].winner is not None
    seats = next(e for e in r.events[0] if isinstance(e, SeatsDrawn))
    assert sorted(seats.seating) == [0, 1, 2, 3]
    rep = replay(e.wire for e in peers[0].log)
    assert rep.closed and rep.scores == ends[0].scores and rep.winner == ends[0].winner
    hands = [e for e in r.events[0] if isinstance(e, HandEnded)]
    assert rep.hands == len(hands) >= 1
    assert rep.shuffles_verified == 4 * len([e for e in r.events[0] if isinstance(e, HandStarted)])
    _check_opened_hands(r)


def _check_opened_hands(r: Router) -> None:
    """Every finished hand opens to a permutation agreeing with what the peers saw, and the
    last one replays on a referee that knows every card, to the same score."""
    rep = replay(e.wire for e in r.peers[0].log)
    assert len(rep.opened) == rep.hands
    table_ = rep.table
    assert all(sorted(o) == list(range(len(o))) for o in rep.opened)
    # every card a player saw is the card the opened deck has in that slot
    last = r.peers[0].table.hand
    assert last is not None and last.view is not None
    for slot, card in last.deck.known_cards().items():
        assert rep.opened[-1][slot] == card
    # the last hand replays on a referee that knows every card, to the same score
    hand = table_.hand
    assert hand is not None and hand.view is not None and hand.result is not None
    ref = RefereeView(hand.view.setup, rep.opened[-1])
    for move in hand.view.moves:
        for s in ref.exposed_by(move):
            ref.reveal(s, rep.opened[-1][s], public=True)
        ref.push(move)
    from buraco_p2p.engine import score_hand

    assert score_hand(ref).totals == hand.result.totals


@pytest.mark.parametrize("preset", [p for p in PRESETS if p != "classic"])
def test_short_matches_in_every_preset(preset: str) -> None:
    r = _short_match(preset, 5)
    r.start()
    r.run()
    assert all(p.table.closed for p in r.peers), preset
    assert same_logs(r, [0, 1, 2, 3])
    rep = replay(e.wire for e in r.peers[1].log)
    assert rep.closed and rep.hands >= 1


@pytest.mark.slow
@pytest.mark.parametrize("preset", PRESETS)
def test_whole_matches_in_every_preset(preset: str) -> None:
    r = table(preset, seed=6)
    r.start()
    r.run()
    assert all(p.table.closed for p in r.peers)
    assert same_logs(r, [0, 1, 2, 3])
    assert replay(e.wire for e in r.peers[2].log).closed


def test_a_pot_reached_with_a_discard_is_opened_after_the_partner_has_played() -> None:
    """The pot's shares are due only once the taker's partner has taken their turn (the
    seat before the taker is on turn); until then nobody, the taker included, sees it."""
    rules = dataclasses.replace(get_preset("us"), target_score=300)
    g = make_genesis(b"pot-timing-table", identities(), rules)
    peers = [Peer(g, i, DeterministicRandomSource(bytes([1, n]) * 16)) for n, i in
             enumerate(identities())]  # fmt: skip
    r = Router(peers, bot_chooser(1))
    r.start()
    table0 = peers[0].table
    while r.queue:
        r.run(1)
        if table0.hand is not None and table0.hand.deferred:
            break
    hand = table0.hand
    assert hand is not None and hand.view is not None and hand.deferred
    taker_seat = hand.deferred[0].seat
    assert taker_seat is not None
    pot = {q.slot for q in hand.deferred}
    taker = table0.seating[taker_seat]
    partner_seat = (taker_seat + 2) % 4
    mark = len(r.events[taker])
    r.run()
    later = r.events[taker][mark:]
    seen = [i for i, e in enumerate(later) if isinstance(e, CardSeen) and e.slot in pot]
    assert seen, "the taker never saw its pot"
    partner_moves = [
        i for i, e in enumerate(later)
        if isinstance(e, MoveApplied) and e.seat == partner_seat and isinstance(e.move, Discard)
    ]  # fmt: skip
    assert partner_moves and partner_moves[0] < seen[0]
    for p in range(4):
        if p != taker:
            assert not any(isinstance(e, CardSeen) and e.slot in pot for e in r.events[p])


def test_any_delivery_order_gives_the_same_log() -> None:
    """Entries delivered in a random order (rounds arriving out of seat order, moves before
    the shares they follow): every peer still builds the same log, the one a FIFO table
    builds from the same seeds."""
    import random

    fifo = _short_match("us", 21)
    fifo.start()
    fifo.run()
    rules = dataclasses.replace(get_preset("us"), target_score=300)
    g = make_genesis(b"short-match-tabl", identities(), rules)
    peers = [Peer(g, i, DeterministicRandomSource(bytes([21, n]) * 16)) for n, i in
             enumerate(identities())]  # fmt: skip
    r = Router(peers, bot_chooser(21), shuffle=random.Random(4))
    r.start()
    r.run()
    assert all(p.table.closed for p in peers)
    assert same_logs(r, [0, 1, 2, 3])
    assert [e.wire for e in peers[0].log] == [e.wire for e in fifo.peers[0].log]


def test_a_seat_sends_its_shuffle_before_it_verifies_the_one_it_builds_on() -> None:
    """With deferred work, the next shuffler's first `work` sends its own shuffle and leaves
    the previous one unapplied; the next `work` verifies it, and only then is it in the log."""
    r = table("us", seed=17)
    r.start()
    peers = r.peers
    while r.queue and not any(p.table.phase is Phase.SHUFFLE for p in peers):
        r.run(1)
    t0 = peers[0].table
    # deliver everything by hand from here, deferring the work
    nxt_seat = 1
    nxt = t0.seating[nxt_seat] if t0.seating else None
    assert nxt is not None
    first = t0.seating[0]
    while r.queue:
        sender, receiver, data = r.queue.popleft()
        if receiver != nxt:
            r._handle(receiver, peers[receiver].receive(data, r.now))
            continue
        peer = peers[nxt]
        out = peer.receive(data, r.now, defer=True)
        r._handle(nxt, out)
        if sender == first and decode_entry(data).kind == "shuffle":
            before = len(peer.log)
            step = peer.work(r.now)
            (mine,) = step.send
            assert decode_entry(mine).kind == "shuffle" and decode_entry(mine).author == nxt
            assert len(peer.log) == before and step.persist == []
            after = peer.work(r.now)  # the verification of seat 0's shuffle
            assert [(e.kind, e.author) for e in after.persist] == [("shuffle", first)]
            rest = peer.run(r.now)  # then our own, not verified again
            assert [(e.kind, e.author) for e in rest.persist][:1] == [("shuffle", nxt)]
            assert rest.send == []  # it was sent already
            return
        r._handle(nxt, peer.run(r.now))
    raise AssertionError("the first shuffle never reached the next shuffler")
