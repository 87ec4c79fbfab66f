"""Void agreements a hostile party tries to abuse, at 2, 3, 4 and 6 seats.

An honest peer (the bot peers' policy: join any proposal a present party made) signs or joins
a void naming a party only once its own clock has seen the current step wait for that party
past the table's timeout; a void point beyond its log never stops it from playing on; two
groups that each name the other silent never both close the match; a claim of the log below
what a party has signed buys no time. Every test here passed a hostile party's abuse on the
code before these rules.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import pytest
from session_helpers import bot_chooser, identities, play_turn, same_logs

from buraco_p2p.crypto import DeterministicRandomSource
from buraco_p2p.net.channel.identity import Identity
from buraco_p2p.rules import get_preset
from buraco_p2p.session import (
    Fault,
    Peer,
    Phase,
    Router,
    Table,
    TimedOut,
    make_entry,
    make_genesis,
)
from buraco_p2p.session.agreement import majority

LIMIT = 1.0  # the table's timeout, in seconds of the router's clock


def _table(n: int, seed: int, **router_args: object) -> Router:
    rules = dataclasses.replace(
        get_preset("classic").with_overrides({"players": n}), target_score=300
    )
    g = make_genesis(b"abuse-test-table", identities(n), rules, timeout_ms=int(LIMIT * 1000))
    peers = [Peer(g, i, DeterministicRandomSource(bytes([seed, k]) * 16))
             for k, i in enumerate(identities(n))]  # fmt: skip
    return Router(peers, bot_chooser(seed), relay=True, **router_args)  # type: ignore[arg-type]


def _on_turn(n: int, seed: int) -> tuple[Router, int]:
    """A table with the first hand under way, every party present, one of them on turn
    (its turn not yet answered): returns the router and that party."""
    r = _table(n, seed)
    r.manual = set(range(n))
    r.start()
    r.run()
    assert r.turns
    return r, r.turns[-1]


def _void(r: Router, author: int, silent: list[int], ahead: int = 0, **body: object) -> bytes:
    """A void `author` signs naming `silent`, at its place in a round `ahead` entries past the
    end of its own log (0: a round starting where its log stands)."""
    t = r.peers[author].table
    active = [p for p in range(t.n) if p not in silent]
    e = make_entry(
        identities(t.n)[author], table=t.terms.table_id,
        index=len(t.log) + ahead + active.index(author), prev=t.void_prev(), author=author,
        kind="void", body={"action": body.pop("action", "end"), "silent": silent, **body},
    )  # fmt: skip
    return e.wire


def _bots_join(r: Router, parties: list[int]) -> None:
    """What the bot peers do on hearing a proposal: join it (the session decides if they may)."""
    for p in parties:
        r.act(p, r.peers[p].join_void(r.now))
    r.run()


def _play(r: Router, party: int) -> None:
    play_turn(r, party)
    r.run()


def _turn_of(r: Router, want: Callable[[int], bool]) -> int:
    """Play the manual turns until a party `want` accepts is on turn; returns it."""
    for _ in range(200):
        t = r.peers[0].table
        x = t.waiting_for[0]
        if t.phase is Phase.TURN and len(t.waiting_for) == 1 and want(x):
            return x
        _play(r, x)
    raise AssertionError("no such turn came")


def _honest(n: int, *hostile: int) -> list[int]:
    return [p for p in range(n) if p not in hostile]


@pytest.mark.parametrize("n", [3, 4, 6])
def test_a_far_ahead_void_does_not_freeze_the_table(n: int) -> None:
    """H signs "end" naming the party on turn, 30 entries past the log: the honest peers
    hear it at once and would join it; none of them may (nobody has waited for anyone), and
    the match plays on past that point with no void."""
    r, x = _on_turn(n, 60 + n)
    h = (x + 1) % n
    start = len(r.peers[0].log)
    r.inject(h, _void(r, h, [x], ahead=30))
    r.run()
    _bots_join(r, _honest(n, h, x))
    for p in _honest(n, h):
        assert r.peers[p].agreement is None, p
    r.manual = set()
    _play(r, x)
    for p in range(n):
        peer = r.peers[p]
        assert peer.table.closed or len(peer.log) > start + 40, p
        assert all(e.kind != "void" for e in peer.log), p
    assert same_logs(r, list(range(n)))


@pytest.mark.parametrize("n", [2, 3, 4, 6])
def test_an_instant_void_does_not_name_a_present_player(n: int) -> None:
    """H proposes "end" naming X while X is on turn: nobody joins before its own clock has
    seen X keep the table waiting, X's move is taken, and the hand goes on. At two seats H
    is party 1: alone, half the table without party 0, its void is no round."""
    r, x = _on_turn(n, 70 + n)
    if n == 2:  # party 0 alone may close a table of two: H is party 1
        x = _turn_of(r, lambda p: p == 0)
    h = (x + 1) % n
    r.inject(h, _void(r, h, [x]))
    r.run()
    _bots_join(r, _honest(n, h, x))
    length = len(r.peers[x].log)
    _play(r, x)
    for p in range(n):
        peer = r.peers[p]
        assert not peer.table.closed, p
        assert len(peer.log) > length, p  # X's move was applied
        assert all(e.kind != "void" for e in peer.log), p
    assert same_logs(r, list(range(n)))


def test_a_hostile_host_cannot_take_a_present_players_seat() -> None:
    """The host proposes to replace X, on turn and playing, by an identity of its own: the
    other parties do not sign, and X plays on in its seat."""
    r, x = _on_turn(4, 81)
    x = _turn_of(r, lambda p: p != 0)
    key = Identity.from_seed(b"\x55" * 32, "heir").public.raw
    r.inject(0, _void(r, 0, [x], action="replace", keys=[key]))
    r.run()
    _bots_join(r, _honest(4, 0, x))
    _play(r, x)
    for p in range(4):
        t = r.peers[p].table
        assert t.keys[x] == identities()[x].public and not t.successions, p
        assert all(e.kind != "void" for e in r.peers[p].log), p


@pytest.mark.parametrize("n", [2, 3, 4, 6])
def test_the_bot_policy_joins_once_its_own_clock_has_waited(n: int) -> None:
    """The other side of the rule: once X really is gone past the timeout, the present
    parties close the match (at two seats, party 0 alone)."""
    r, x = _on_turn(n, 100 + n)
    x = _turn_of(r, lambda p: p != 0)
    present = _honest(n, x)
    r.silent = {x}
    r.advance(LIMIT / 2)
    proposer = present[0]
    with pytest.raises(ValueError, match="past its timeout"):
        r.peers[proposer].propose_void("end", r.now, silent=(x,))
    r.advance(LIMIT)
    for p in present:
        assert [e.parties for e in r.events[p] if isinstance(e, TimedOut)] == [(x,)], p
    r.act(proposer, r.peers[proposer].propose_void("end", r.now, silent=(x,)))
    r.run()
    _bots_join(r, present[1:])
    for p in present:
        assert r.peers[p].table.closed, p
    assert same_logs(r, present)


@pytest.mark.parametrize(
    ("n", "silent", "ok"),
    [
        (2, [1], True), (2, [0], False),
        (3, [2], True), (3, [0], True), (3, [1, 2], False),
        (4, [3], True), (4, [2, 3], True), (4, [0, 1], False), (4, [1, 2, 3], False),
        (6, [5], True), (6, [3, 4, 5], True), (6, [0, 1, 2], False), (6, [0, 4, 5], False),
        (6, [1, 2, 3, 4], False),
    ],
)  # fmt: skip
def test_a_void_needs_more_than_half_or_half_with_party_0(
    n: int, silent: list[int], ok: bool
) -> None:
    """Where the table waits for everybody (the seat draw), a void may name any parties but
    must leave more than half of the table to sign it, or exactly half with party 0."""
    rules = get_preset("classic").with_overrides({"players": n})
    t = Table(make_genesis(b"abuse-test-table", identities(n), rules))
    assert set(t.waiting_for) == set(range(n))
    assert majority(n, silent) is ok
    assert t.can_void(silent) is ok


@pytest.mark.parametrize(("n", "halves"), [
    (2, ([0], [1])), (3, ([2], [0, 1])), (3, ([0, 2], [1])), (4, ([0, 1], [2, 3])),
    (4, ([0, 3], [1, 2])),
    (6, ([0, 1, 2], [3, 4, 5])), (6, ([1, 2], [0, 3, 4, 5])),
])  # fmt: skip
def test_a_split_table_closes_one_match_with_one_log(
    n: int, halves: tuple[list[int], list[int]]
) -> None:
    """The table splits in two groups during the seat draw; each waits past the timeout and
    names the other silent. Only the larger group (or of two halves, the one with party 0)
    can close the match; once the split heals, the others apply that very round, and every
    log is the same."""
    a, b = halves
    side = {p: 0 if p in a else 1 for p in range(n)}

    def split(sender: int, receiver: int, data: bytes) -> bytes | None:
        return data if side[sender] == side[receiver] else None

    r = _table(n, 110 + n, tamper=split)
    r.start()
    r.run()
    r.advance(2 * LIMIT)
    closers = []
    for group, other in ((a, b), (b, a)):
        for p in group:
            try:
                r.act(p, r.peers[p].propose_void("end", r.now, silent=tuple(other)))
            except ValueError as exc:
                assert "more than half" in str(exc)
                continue
            closers.append(p)
    r.run()
    winner = a if majority(n, b) else b
    assert sorted(closers) == sorted(winner)
    for p in range(n):
        assert r.peers[p].table.closed is (p in winner), p
    # The split heals: each peer of the other group receives the winners' log in one batch
    # and files all of it before it applies any (as the driver does with every message
    # already received), so the complete void round is applied where it stands.
    r.tamper = None
    for p in range(n):
        if p not in winner:
            peer = r.peers[p]
            for e in r.peers[winner[0]].log[1:]:
                r.act(p, peer.receive(e.wire, r.now, defer=True))
            r.act(p, peer.run(r.now))
    r.run()
    assert all(r.peers[p].table.closed for p in range(n))
    assert same_logs(r, list(range(n)))


@pytest.mark.parametrize("n", [2, 4])
def test_claims_below_what_a_party_signed_buy_no_time(n: int) -> None:
    """A party that is caught up (it signed entries of this hand) and withholds its move
    sends rising claims of the log from 0: only claims past its own latest entry count, so
    it is named within a couple of timeouts, not after ten."""
    r, x = _on_turn(n, 120 + n)
    watcher = (x + 1) % n
    peer = r.peers[watcher]
    key = identities(n)[x].public
    latest = max(e.index for e in peer.log if e.author == x)
    length = len(peer.log)
    assert length - latest <= 8  # it is caught up: it signed a few entries ago
    now = r.now
    named = None
    for claim in range(length):
        now += LIMIT / 2
        counted = peer.heard(key, claim, now)
        assert counted is (claim > latest), claim
        events = [e for e in peer.tick(now, {x}).events if isinstance(e, TimedOut)]
        if events:
            named = events[0].parties, now - r.now
            break
    assert named is not None and named[0] == (x,)
    assert named[1] <= (length - latest + 1) * LIMIT


@pytest.mark.parametrize(("n", "lone"), [(3, 2), (4, 3), (6, 4)])
def test_a_peer_that_played_on_alone_after_a_split_joins_the_one_log(n: int, lone: int) -> None:
    """The table splits while party `lone` is on turn: it plays its move, which never
    reaches the others; they (a majority) wait past the timeout and close the match naming
    it, at the point its move took in its own log. Once the split heals, the lone peer finds
    the complete round of a majority naming it, whose signers have nothing in its log past
    that point: it rolls its log back to the point and applies the round. One log."""
    r, _ = _on_turn(n, 130 + n)
    x = _turn_of(r, lambda p: p == lone)

    def split(sender: int, receiver: int, data: bytes) -> bytes | None:
        return data if (sender == x) == (receiver == x) else None

    r.tamper = split
    point = len(r.peers[x].log)
    _play(r, x)
    assert len(r.peers[x].log) > point  # its own move is in its log, nowhere else
    others = _honest(n, x)
    r.advance(2 * LIMIT)
    r.act(others[0], r.peers[others[0]].propose_void("end", r.now, silent=(x,)))
    r.run()
    _bots_join(r, others[1:])
    for p in others:
        assert r.peers[p].table.closed, p
    r.tamper = None
    peer = r.peers[x]
    for e in r.peers[others[0]].log[point:]:  # what a sync brings it once the split heals
        r.act(x, peer.receive(e.wire, r.now))
    r.run()
    assert peer.table.closed
    assert same_logs(r, list(range(n)))
    assert [e.wire for e in r.persisted[x]] == [e.wire for e in peer.log[1:]]
    assert not [e for e in r.events[x] if isinstance(e, Fault)]


def test_a_round_whose_signer_played_on_with_us_rolls_nothing_back() -> None:
    """The same round shown to a peer whose log past the point holds an entry of one of
    its signers: that signer went on with it, so this is no split it lost; the round is
    refused as before and its log stays."""
    n, lone = 4, 3
    r, _ = _on_turn(n, 134)
    x = _turn_of(r, lambda p: p == lone)
    point = len(r.peers[x].log)
    peers = [r.peers[p] for p in range(n)]
    # the others sign, at the point, a round naming x (as a hostile majority could)
    t = peers[0].table
    active = [p for p in range(n) if p != x]
    wires = [make_entry(identities(n)[p], table=t.terms.table_id, index=point + k,
                        prev=t.void_prev(), author=p, kind="void",
                        body={"action": "end", "silent": [x]}).wire
             for k, p in enumerate(active)]  # fmt: skip
    _play(r, x)  # the match goes on with everyone, past the point
    _play(r, _turn_of(r, lambda p: p != x))
    before = [e.wire for e in peers[x].log]
    assert any(e.author in active for e in peers[x].log[point:])
    for w in wires:
        out = peers[x].receive(w, r.now)
        assert out.rollback is None and not out.persist
    assert [e.wire for e in peers[x].log] == before and not peers[x].table.closed


@pytest.mark.parametrize("n", [3, 4])
def test_a_lone_round_refused_at_our_point_leaves_our_entry_to_make(n: int) -> None:
    """H signs a round alone naming every other party, at the index where party P's share
    for a move is due, and it reaches P before that move: P then holds a round complete at
    its point, which comes before its own entry. The table refuses the round (no majority
    signed it); P makes its entry all the same. Before, a refused round left the entry
    unmade: no other entry came to prompt it, and the others named P silent (simulator
    seed 630291)."""
    ref = _table(n, 95)
    ref.start()
    ref.run()
    log = ref.peers[0].log
    k = next(i for i in range(2, len(log)) if log[i].kind == "shares"
             and log[i - 1].kind == "move" and log[i - 1].author != log[i].author)  # fmt: skip
    p = log[k].author
    h = next(q for q in range(n) if q != p)
    prev = Table(log[0])
    for e in log[1:k]:
        prev.apply(e)
    lone = make_entry(
        identities(n)[h], table=prev.terms.table_id, index=k, prev=prev.prev_at(k), author=h,
        kind="void", body={"action": "end", "silent": [q for q in range(n) if q != h]},
    )  # fmt: skip
    r = _table(n, 95)
    r.start()
    while len(r.peers[p].log) < k - 1:
        r.run(1)
    r.queue.appendleft((h, p, lone.wire))
    r.run()
    assert [e.hash for e in r.peers[p].log[: k + 1]] == [e.hash for e in log[: k + 1]]
