"""A present party that holds the table hostage by never signing the void, at 2, 3, 4 and 6
seats (docs/protocol.md 4.5, "Retries").

X is gone on its own turn; the present parties sign a void naming X; H is present (it
receives everything) but never signs. Once their own clocks have seen that round wait for H
past twice the table's timeout, the honest parties sign the next try, naming X and H; where
that leaves a majority the table closes, elsewhere (any 2 of 3, H = party 0 at 4 seats) they
say so and wait, naming nobody. A hostile party cannot use tries to name an honest present
party, nor make the honest peers close on two different rounds. On the code before retries
every table here stayed open for ever.
"""

from __future__ import annotations

import dataclasses
import random

import pytest
from session_helpers import (
    bot_chooser,
    identities,
    play_turn,
    same_logs,
    snapshot,
    table_copy,
)

from buraco_p2p.crypto import DeterministicRandomSource
from buraco_p2p.session import (
    Fault,
    MalformedEntry,
    Peer,
    Phase,
    Router,
    Table,
    VoidHeld,
    decode_entry,
    make_entry,
    make_genesis,
    replay,
)
from buraco_p2p.session.agreement import majority
from buraco_p2p.session.bodies import BodyError, check_body
from buraco_p2p.session.evidence import equivocates

LIMIT = 1.0  # the table's timeout, in seconds of the router's clock


def _table(n: int, seed: int) -> Router:
    rules = dataclasses.replace(
        __import__("buraco_p2p.rules", fromlist=["get_preset"]).get_preset("classic")
        .with_overrides({"players": n}), target_score=300,
    )  # fmt: skip
    g = make_genesis(b"hostage-test-tbl", identities(n), rules, timeout_ms=int(LIMIT * 1000))
    peers = [Peer(g, i, DeterministicRandomSource(bytes([seed, k]) * 16))
             for k, i in enumerate(identities(n))]  # fmt: skip
    return Router(peers, bot_chooser(seed), relay=True)


_ON_TURN: dict[tuple[int, int], Router] = {}  # (seats, party on turn) -> the table then


def _stalled_turn(n: int, x: int) -> Router:
    """A table whose first hand is under way with party `x` on turn, gone: every other party
    present, each clock past the timeout for that turn (a copy of one table per seat count,
    played on to `x`'s turn once: the module plays the least it needs)."""
    if (n, x) not in _ON_TURN:
        r = _table(n, 40 + n)
        r.manual = set(range(n))
        r.start()
        r.run()
        for _ in range(300):
            t = r.peers[0].table
            on = t.waiting_for[0]
            if t.phase is Phase.TURN and len(t.waiting_for) == 1 and on == x:
                break
            play_turn(r, on)
            r.run()
        else:
            raise AssertionError("party x never came on turn")
        _ON_TURN[n, x] = r
    r = snapshot(_ON_TURN[n, x])
    r.silent = {x}
    r.advance(1.5 * LIMIT)
    return r


def _agree(r: Router, honest: list[int], x: int) -> None:
    """The first honest party proposes to end the match naming X; the others join (the bot
    peers' policy)."""
    first, *rest = honest
    r.act(first, r.peers[first].propose_void("end", r.now, silent=(x,)))
    r.run()
    for p in rest:
        r.act(p, r.peers[p].join_void(r.now))
    r.run()


def _wait(r: Router, seconds: float) -> None:
    """Let time pass in small steps, each party acting as its own clock allows."""
    for _ in range(round(seconds / 0.25)):
        r.advance(0.25)
        r.run()


def _voids(r: Router, p: int) -> list[tuple[int, list[int]]]:
    return [(e.body.get("try", 0), e.body["silent"]) for e in r.peers[p].log if e.kind == "void"]


# (seats, the party gone, the hostage holders): where the honest ones are a majority (or
# half with party 0), the second try closes the table; elsewhere nobody is named.
CASES = [
    (3, 1, (2,)),
    (3, 1, (0,)),
    (4, 1, (3,)),
    (4, 1, (0,)),  # H is party 0: the two others are half without it
    (6, 2, (4,)),
    (6, 2, (4, 5)),  # two holders: named together (three signers with party 0)
    (6, 2, (0, 4)),  # ... but not without party 0
]


@pytest.mark.parametrize(("n", "x", "holders"), CASES)
def test_a_party_that_never_signs_is_named_by_a_retry(
    n: int, x: int, holders: tuple[int, ...]
) -> None:
    r = _stalled_turn(n, x)
    honest = [p for p in range(n) if p != x and p not in holders]
    _agree(r, honest, x)
    start = len(r.peers[honest[0]].log)
    _wait(r, 1.5 * LIMIT)  # one timeout and a half: a late signer still has time
    assert not any(r.peers[p].table.closed for p in range(n))
    _wait(r, 1.5 * LIMIT)
    named = (x, *holders)
    if majority(n, named):
        for p in [*honest, *holders]:
            assert r.peers[p].table.closed, p
            assert _voids(r, p) == [(1, sorted(named))] * len(honest), p
        assert same_logs(r, [*honest, *holders])
        t = replay(e.wire for e in r.peers[honest[0]].log)
        rec = t.table.voids[-1]
        assert t.closed and rec.attempt == 1 and rec.held == holders
        for p in honest:
            told = [e for e in r.events[p] if isinstance(e, VoidHeld)]
            assert [(e.parties, e.outcome) for e in told] == [(holders, "retry")], p
    else:
        for p in range(n):
            assert not r.peers[p].table.closed and _voids(r, p) == [], p
            assert len(r.peers[p].log) == start, p
        for p in honest:
            told = [e for e in r.events[p] if isinstance(e, VoidHeld)]
            assert [(e.parties, e.outcome) for e in told] == [(holders, "held")], p
        _wait(r, 4 * LIMIT)  # and it stays so: nobody named, nothing signed again
        for p in range(n):
            assert not r.peers[p].table.closed and _voids(r, p) == [], p


def test_two_seats_need_no_retry() -> None:
    """At two seats the party left is the only signer: party 0 closes alone naming party 1,
    with a try-0 void (no "try" key); party 1 alone may not sign and names nobody."""
    r = _stalled_turn(2, 1)
    _agree(r, [0], 1)
    assert r.peers[0].table.closed
    assert _voids(r, 0) == [(0, [1])] and "try" not in r.peers[0].log[-1].body
    r = _stalled_turn(2, 0)
    with pytest.raises(ValueError, match="more than half"):
        r.peers[1].propose_void("end", r.now, silent=(0,))
    _wait(r, 3 * LIMIT)
    assert not r.peers[1].table.closed and _voids(r, 1) == []


def test_a_holder_that_signs_late_joins_the_first_try() -> None:
    """H signs the first try before the retry is due: the round closes naming X alone."""
    r = _stalled_turn(4, 1)
    _agree(r, [0, 2], 1)
    _wait(r, LIMIT)
    r.act(3, r.peers[3].join_void(r.now))
    r.run()
    for p in (0, 2, 3):
        assert r.peers[p].table.closed and _voids(r, p) == [(0, [1])] * 3, p


def test_a_round_held_for_want_of_a_majority_is_retried_once_some_sign() -> None:
    """At six seats X (party 2) is gone; parties 0 and 5 sign the void naming it, parties 1
    and 4 sign it only after it has waited twice the timeout, and H (party 3) never does.
    At twice the timeout a retry naming 1, 3 and 4 too would leave two signers: 0 and 5
    hold ("held"). Once 1 and 4 have signed, a retry naming X and H leaves four: 0 and 5
    decide again and sign it, and so do 1 and 4 on their own clocks, and the table closes.
    (A peer that decided once only held for good, and 1 and 4's retry, which needs its
    signature, with it.)"""
    n, x, h = 6, 2, 3
    r = _stalled_turn(n, x)
    _agree(r, [0, 5], x)
    _wait(r, 2.5 * LIMIT)
    for p in (0, 5):
        told = [(e.parties, e.outcome) for e in r.events[p] if isinstance(e, VoidHeld)]
        assert told == [((1, 3, 4), "held")], p
    for p in (1, 4):
        r.act(p, r.peers[p].join_void(r.now))
    r.run()
    _wait(r, 3 * LIMIT)
    for p in (0, 1, 4, 5):
        assert r.peers[p].table.closed, p
        assert _voids(r, p) == [(1, [x, h])] * 4, p
    assert same_logs(r, [0, 1, 4, 5])


def test_a_bogus_retry_names_no_honest_party() -> None:
    """At six seats X (party 2) is gone, H4 and H5 hostile: they never sign the first try
    and at once sign a try 1 naming X and honest party 3 (present, it signed). Nobody
    honest joins it; the honest retry names X, H4 and H5, and party 3 is never named."""
    n, x = 6, 2
    r = _stalled_turn(n, x)
    honest = [0, 1, 3]
    _agree(r, honest, x)
    t = r.peers[4].table
    for h in (4, 5):
        active = [p for p in range(n) if p not in (x, 3)]
        bogus = make_entry(
            identities(n)[h], table=t.terms.table_id, index=len(t.log) + active.index(h),
            prev=t.void_prev(), author=h, kind="void",
            body={"action": "end", "silent": [x, 3], "try": 1},
        )  # fmt: skip
        r.inject(h, bogus.wire)
    r.silent = {x, 4, 5}  # they say nothing more
    r.run()
    _wait(r, 3 * LIMIT)
    for p in honest:
        assert r.peers[p].table.closed, p
        assert _voids(r, p) == [(1, [2, 4, 5])] * 3, p
    assert same_logs(r, honest)


def test_a_retry_is_no_proposal() -> None:
    """H signs a try 1 naming X and honest party 2 before anybody proposed anything: it is
    no proposal (nobody joins it, nobody is tied to it), and the honest parties still agree
    to a void naming X alone when party 0 proposes one."""
    n, x, h = 4, 1, 3
    r = _stalled_turn(n, x)
    t = r.peers[0].table
    bogus = make_entry(identities(n)[h], table=t.terms.table_id, index=len(t.log) + 1,
                       prev=t.void_prev(), author=h, kind="void",
                       body={"action": "end", "silent": [x, 2], "try": 1})  # fmt: skip
    r.inject(h, bogus.wire)
    r.run()
    for p in (0, 2):
        assert r.peers[p].proposal is None, p
        r.act(p, r.peers[p].join_void(r.now))
        assert r.peers[p].agreement is None, p
    r.silent = {x, h}
    _agree(r, [0, 2], x)
    for p in (0, 2):
        agreed = r.peers[p].agreement
        assert agreed is not None and agreed.silent == (x,) and agreed.attempt == 0, p


@pytest.mark.parametrize("seed", range(6))
def test_a_late_signature_never_splits_the_honest_parties(seed: int) -> None:
    """H holds its first-try void back and sends it at a random moment around the retry,
    to random parties first, over a network that reorders everything: every honest party
    closes on one round (naming X alone, or X and H), never on two."""
    n, x, h = 6, 2, 5
    rnd = random.Random(seed)
    held: list[bytes] = []

    def keep(sender: int, receiver: int, data: bytes) -> bytes | None:
        if sender == h:
            held.append(data)
            return None
        return data

    r = _stalled_turn(n, x)
    honest = [p for p in range(n) if p not in (x, h)]
    _agree(r, honest, x)
    r.tamper = keep
    r.act(h, r.peers[h].join_void(r.now))
    r.run()
    mine = list(held)  # H's first-try void, signed and held back
    assert mine
    r.shuffle = rnd
    _wait(r, rnd.choice([1.5, 1.75, 2.0, 2.25]))
    r.tamper = None
    r.silent = {x, h}
    r.advance(0.25)  # the clocks move on (the retries may be signed now), and at once...
    first = rnd.sample(honest, rnd.randrange(1, len(honest) + 1))
    for w in mine:  # ... H's first try reaches some, in any order with the retries
        r.inject(h, w, to=first)
    r.run()
    _wait(r, 3 * LIMIT)
    for p in honest:
        assert r.peers[p].table.closed, p
    assert same_logs(r, honest)
    assert _voids(r, honest[0])[0] in ((0, [x]), (1, [x, h]))


def test_a_restart_stands_by_its_latest_try() -> None:
    """Party 2 signs the first try and the retry, cut off from the others, and restarts from
    its saved log and saved votes (both tries): it stands by the retry, sends both again and
    signs no other void there; the round closes on the retry."""
    n, x, h = 4, 1, 3
    r = _stalled_turn(n, x)
    saved: list[bytes] = []
    apart = False

    def cut(sender: int, receiver: int, data: bytes) -> bytes | None:
        if sender == 2 and data not in saved:
            saved.append(data)
        return None if apart and 2 in (sender, receiver) else data

    r.tamper = cut
    _agree(r, [0, 2], x)
    apart = True
    _wait(r, 3 * LIMIT)
    old = r.peers[2]
    assert old.agreement is not None and old.agreement.attempt == 1
    assert not r.peers[0].table.closed and not old.table.closed
    votes = [w for w in saved if decode_entry(w).kind == "void" and decode_entry(w).author == 2]
    genesis = old.log[0]
    # the same secrets (a client's random source is keyed by its saved secret and the log)
    fresh = Peer(genesis, identities(n)[2], DeterministicRandomSource(bytes([44, 2]) * 16), r.now)
    fresh.start(r.now)
    for e in r.persisted[2]:  # its saved log
        fresh.receive(e.wire, r.now)
    assert [e.wire for e in fresh.log] == [e.wire for e in old.log]
    r.peers[2] = fresh
    r.tamper = None
    sent: list[bytes] = []
    for w in votes:
        out = fresh.restore_vote(w)
        sent += out.send
        r.act(2, out)
    agreed = fresh.agreement
    assert agreed is not None and agreed.attempt == 1 and agreed.silent == (x, h)
    r.run()
    assert r.peers[0].table.closed  # it had signed the retry: ours completes its round
    for e in r.peers[0].log[len(fresh.log):]:  # what a sync brings the restarted party
        r.act(2, fresh.receive(e.wire, r.now))
    r.run()
    for p in (0, 2):
        assert r.peers[p].table.closed, p
        assert _voids(r, p) == [(1, [x, h])] * 2, p
    assert sorted(sent) == sorted(votes)  # sent again, nothing new signed
    assert [decode_entry(w).body.get("try", 0) for w in votes] == [0, 1]


def test_one_entry_has_one_encoding() -> None:
    """Try 0 is written by leaving the key out: an explicit 0 is refused, as is a try past
    N-1, a non-integer, or a retry whose action is not "end"; a void without the key (every
    log before retries) is try 0."""
    ok = {"action": "end", "silent": [1, 3], "try": 1}
    assert check_body("void", ok, 4)[3] == 1  # type: ignore[index]
    assert check_body("void", {**ok, "try": 3}, 4)[3] == 3  # type: ignore[index]
    assert check_body("void", {"action": "end", "silent": [1]}, 4)[3] == 0  # type: ignore[index]
    for bad in (0, 4, -1, True, "1", 1.0):
        with pytest.raises(BodyError):
            check_body("void", {**ok, "try": bad}, 4)
    with pytest.raises(BodyError, match="must be 'end'"):
        check_body("void", {**ok, "action": "void"}, 4)


@pytest.mark.parametrize("attempt", [0, 4, 7])
def test_a_try_out_of_its_bounds_is_malformed_wherever_it_stands(attempt: int) -> None:
    """4.2's bound `1 <= try <= N-1` is the body's schema: a void whose try breaks it is
    `MalformedEntry` (naming its author) in every place, never `OutOfTurn` because no round
    could open on it."""
    n, x = 4, 1
    r = _stalled_turn(n, x)
    t = r.peers[0].table
    verifier = Table(t.log[0])
    for e in t.log[1:]:
        verifier.apply(e)
    first = make_entry(identities(n)[0], table=t.terms.table_id, index=len(t.log),
                       prev=t.void_prev(), author=0, kind="void",
                       body={"action": "end", "silent": [x], "try": attempt})  # fmt: skip
    with pytest.raises(MalformedEntry) as got:
        table_copy(verifier).apply(first)
    assert got.value.author == 0


def test_an_equivocation_on_a_void_is_resolved_by_a_retry() -> None:
    """H signs two different voids for one index: "end" to party 0, "void" to party 2 (the
    bot peers' policy joins what it hears first). Both honest peers find the equivocation;
    their rounds cannot complete (two actions), so after twice the timeout both sign try 1,
    "end", naming X and the equivocator, and close on that one round."""
    n, x, h = 4, 1, 3
    r = _stalled_turn(n, x)
    t = r.peers[0].table
    active = [p for p in range(n) if p != x]
    two = [make_entry(identities(n)[h], table=t.terms.table_id, index=len(t.log) + active.index(h),
                      prev=t.void_prev(), author=h, kind="void",
                      body={"action": a, "silent": [x]}).wire
           for a in ("end", "void")]  # fmt: skip
    r.inject(h, two[0], to=[0])
    r.inject(h, two[1], to=[2])
    r.silent = {x, h}
    r.run(2)  # each honest peer hears its copy first ...
    for p in (0, 2):
        r.act(p, r.peers[p].join_void(r.now))
    r.run()  # ... then the other, relayed: equivocation
    for p in (0, 2):
        assert any(isinstance(e, Fault) and e.error.author == h for e in r.events[p]), p
        assert not r.peers[p].table.closed
    _wait(r, 3 * LIMIT)
    for p in (0, 2):
        assert r.peers[p].table.closed, p
        assert _voids(r, p) == [(1, [x, h])] * 2, p
    assert same_logs(r, [0, 2])


def test_a_round_the_equivocators_other_void_completes_is_applied() -> None:
    """H's two voids reach parties 0 and 2 in different orders, but both honest parties
    agree to "end" (party 2 joins party 0's proposal): the round completes with H's "end"
    void, which party 2 holds second; it applies that round like party 0, at once."""
    n, x, h = 4, 1, 3
    r = _stalled_turn(n, x)
    t = r.peers[0].table
    active = [p for p in range(n) if p != x]
    two = [make_entry(identities(n)[h], table=t.terms.table_id, index=len(t.log) + active.index(h),
                      prev=t.void_prev(), author=h, kind="void",
                      body={"action": a, "silent": [x]}).wire
           for a in ("end", "void")]  # fmt: skip
    r.inject(h, two[0], to=[0])
    r.inject(h, two[1], to=[2])
    r.silent = {x, h}
    r.run()
    r.act(0, r.peers[0].propose_void("end", r.now, silent=(x,)))
    r.run()
    r.act(2, r.peers[2].join_void(r.now))
    r.run()
    for p in (0, 2):
        assert r.peers[p].table.closed, p
        assert _voids(r, p) == [(0, [x])] * 3, p
    assert same_logs(r, [0, 2])


def test_two_tries_at_one_index_are_not_equivocation() -> None:
    """An honest party's retry may stand at the index of its first try (fewer signers): two
    voids of one author at one index with different tries are two votes; two with the same
    try and different contents are equivocation."""
    t = _table(4, 5).peers[0].table

    def void(body: dict[str, object]) -> object:
        return make_entry(identities(4)[0], table=t.terms.table_id, index=9, prev=b"\1" * 32,
                          author=0, kind="void", body=body)  # fmt: skip

    a = void({"action": "end", "silent": [1]})
    b = void({"action": "end", "silent": [1, 3], "try": 1})
    c = void({"action": "end", "silent": [1, 2], "try": 1})
    assert not equivocates(a, void({"action": "end", "silent": [1], "try": 1}))  # type: ignore[arg-type]
    assert not equivocates(a, b)  # type: ignore[arg-type]
    assert equivocates(b, c)  # type: ignore[arg-type]
