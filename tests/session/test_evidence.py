"""Evidence is only ever real, and a detected equivocation always resolves.

A hostile party tries to make honest peers name somebody else (an entry signed with a key a
mere proposal names, a key a replacement retired, a stale speculative shuffle), to leave the
honest peers on forked logs after it equivocates, or to make them hold its entries for good.
Every honest peer must name only the party that signed twice, close one void round with the
others at one point, and hold nothing the log has passed.
"""

from __future__ import annotations

import dataclasses
import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgpack
import pytest
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from session_helpers import (
    bot_chooser,
    identities,
    one_log,
    resign,
    run_until,
    same_logs,
    snapshot,
    stalled,
    table_copy,
)

from buraco_p2p.crypto import DeterministicRandomSource
from buraco_p2p.engine import Discard, DrawStock
from buraco_p2p.net.channel.identity import Identity
from buraco_p2p.rules import RuleSet, get_preset
from buraco_p2p.session import (
    BadSignature,
    Entry,
    Equivocation,
    Fault,
    LogError,
    Output,
    Peer,
    Phase,
    Refused,
    Router,
    Table,
    Voided,
    check_equivocation,
    decode_entry,
    make_entry,
    make_genesis,
    replay,
)
from buraco_p2p.session.inbox import MAX_AHEAD
from protocol.gen.files import VECTOR_DIR

Tamper = Callable[[int, int, bytes], bytes | None]


def _rules(n: int) -> RuleSet:
    rules = get_preset("classic").with_overrides({"players": n})
    return dataclasses.replace(rules, target_score=300)


def _table(n: int, seed: int, **router_args: object) -> Router:
    """A fresh table of `n` peers (not started), every turn left to the test."""
    g = make_genesis(b"evidence-tests-t", identities(n), _rules(n), timeout_ms=1000)
    peers = [Peer(g, i, DeterministicRandomSource(bytes([seed, k]) * 16))
             for k, i in enumerate(identities(n))]  # fmt: skip
    r = Router(peers, bot_chooser(seed), **router_args)  # type: ignore[arg-type]
    r.manual = set(range(n))
    return r


def _resign(e: Entry, party: int, **changes: object) -> Entry:
    """`e` with fields changed, signed by `party` (of a table of up to eight)."""
    fields: dict[str, object] = dict(table=e.table, index=e.index, prev=e.prev, author=e.author,
                                     kind=e.kind, body=dict(e.body))  # fmt: skip
    fields.update(changes)
    return make_entry(identities(8)[party], **fields)  # type: ignore[arg-type]


def _faults(r: Router, p: int) -> list[LogError]:
    return [e.error for e in r.events[p] if isinstance(e, Fault)]


def _signed(who: Identity, t: Table, index: int, prev: bytes, author: int, kind: str,
            body: dict[str, object]) -> Entry:  # fmt: skip
    return make_entry(who, table=t.terms.table_id, index=index, prev=prev, author=author,
                      kind=kind, body=body)  # fmt: skip


# ---------------------------------------------------------------- a proposal gives no standing


@pytest.mark.parametrize("n", [2, 3, 4, 6])
def test_a_replace_proposal_cannot_frame_a_party_as_an_equivocator(n: int) -> None:
    """H proposes to replace X by a key K of its own, then signs with K an entry "by X" for
    an index X already authored, the same `p`: no honest peer names X (or anybody), and the
    table goes on; a void "by X" under K is not even taken as X's proposal."""
    r = _table(n, 11, relay=True)
    hostile, x = 0, 1
    honest = [p for p in range(n) if p != hostile]
    r.start()
    run_until(r, lambda: min(len(r.peers[p].log) for p in range(n)) > 2 * n)  # seats drawn
    t = r.peers[honest[0]].table
    k = Identity.from_seed(b"\x66" * 32, "framer")
    # (its point one past the log, so that at two seats it is no complete round by itself)
    void = _signed(identities(n)[hostile], t, len(t.log) + 1, t.void_prev(), hostile, "void",
                   {"action": "replace", "silent": [x], "keys": [k.public.raw]})  # fmt: skip
    authored = next(e for e in t.log[1:] if e.author == x)
    frame = _signed(
        k,
        t,
        authored.index,
        authored.prev,
        x,
        authored.kind,
        {"c": bytes(32)} if authored.kind == "commit" else {"n": bytes(32)},
    )
    fake_void = _signed(k, t, len(t.log) + 2, t.void_prev(), x, "void",
                        {"action": "end", "silent": [hostile]})  # fmt: skip
    for p in honest:
        before = len(r.events[p])
        for e in (void, frame, fake_void):
            r.act(p, r.peers[p].receive(e.wire, r.now))
        assert not _faults(r, p), f"party {p} named somebody"
        assert r.peers[p].table.fault is None
        proposal = r.peers[p].proposal
        assert proposal is None or proposal[1] == hostile
        refused = [e for e in r.events[p][before:] if isinstance(e, Refused)]
        assert refused and all(e.error.author == x for e in refused)
    # entries "by X" under K for the indices ahead, where X's own are still to come: they
    # take no place of X's, and X's own apply
    ahead = len(t.log)
    for i in range(ahead, ahead + 3 * n):
        junk = _signed(k, t, i, t.step_prev, x, "keys", {"key": bytes(96), "c": bytes(32)})
        for p in honest:
            r.act(p, r.peers[p].receive(junk.wire, r.now))
    r.run()  # the honest peers play the hand on, to the first turn
    assert not any(_faults(r, p) for p in honest)
    assert all(r.peers[p].table.phase is Phase.TURN for p in honest)
    assert same_logs(r, honest)
    own = [e for e in r.peers[x].log[ahead:] if e.author == x]
    assert own
    for e in own:
        e.verify(tuple(t.terms.keys))
    with pytest.raises(BadSignature):  # and no third party takes the pair as evidence
        check_equivocation(t.log[0], authored.wire, frame.wire)


# ---------------------------------------------------------------- the key in force


def test_an_entry_signed_with_a_replaced_key_is_refused_like_a_forgery() -> None:
    """After a "replace" round, the seat's old identity signs, with the right `p`, the
    entry the heir owes; it reaches a present peer before that peer's round is whole (so its
    signature held on receipt). The peer applies only what verifies under the key in force:
    the old-key entry is refused (`BadSignature`, nobody faulted) and the heir's applies."""
    gone = 2
    r, heir_id = stalled(45, b"evidence-replace", gone, 1.0)
    present = [p for p in range(4) if p != gone]
    log = r.peers[0].log
    heir = Peer(log[0], heir_id, DeterministicRandomSource(b"\x55" * 32), r.now, heir=True)
    for e in log[1:]:
        heir.receive(e.wire, r.now)
    r.peers[gone] = heir
    r.silent = set()
    victim = present[0]
    late: list[tuple[int, int, bytes]] = []
    forged: list[Entry] = []

    def tamper(sender: int, receiver: int, data: bytes) -> bytes | None:
        e = decode_entry(data)
        if receiver != victim:
            return data
        if e.kind == "void" and e.author == present[-1] and not forged:
            late.append((sender, receiver, data))
            return None
        if e.author == gone and sender == gone and not forged:
            old = resign(e, gone)  # the genesis identity of the seat, same entry
            forged.append(old)
            r.queue.extend(late)  # the round completes after the forgery was heard
            r.queue.append((sender, receiver, data))
            return old.wire
        return data

    r.tamper = tamper
    for p in present:
        r.act(p, r.peers[p].propose_void("replace", r.now, (gone,), (heir_id.public.raw,)))
    r.run()
    assert forged
    t = r.peers[victim].table
    assert t.keys[gone].raw == heir_id.public.raw
    assert forged[0].wire not in [e.wire for e in t.log]
    refused = [e.error for e in r.events[victim] if isinstance(e, Refused)]
    assert any(isinstance(x, BadSignature) and x.author == gone for x in refused)
    assert not _faults(r, victim)
    assert same_logs(r, [0, 1, 2, 3])
    for e in t.log:
        if e.index > t.successions[0][0]:
            e.verify(tuple(t.keys))
    assert t.key_at(gone, forged[0].index) == t.keys[gone]
    assert t.key_at(gone, 1) == t.terms.keys[gone]
    assert heir.seated  # and the seat's key in force is the heir's own


# ---------------------------------------------------------------- held entries are bounded


def test_entries_held_for_indices_the_log_passed_are_dropped() -> None:
    """A hostile party signs entries for indices other parties author (junk bodies, its own
    valid signature, as far ahead as a peer takes them): once the log passes them, no honest
    peer holds any of them."""
    n, hostile = 4, 3
    r = _table(n, 12, relay=True)
    r.manual = set()
    r.start()
    run_until(r, lambda: r.peers[0].table.phase is Phase.TURN)
    t = r.peers[0].table
    base = len(t.log)
    # where the log goes from here (the table is deterministic): the indices others author
    ahead = snapshot(r)
    run_until(ahead, lambda: len(ahead.peers[0].log) > base + MAX_AHEAD)
    others = [e.index for e in ahead.peers[0].log[base : base + MAX_AHEAD - 1]
              if e.author != hostile]  # fmt: skip
    junk = [_signed(identities(n)[hostile], t, i, bytes(32), hostile, "move",
                    {"m": [0, 0], "shares": None, "pad": bytes(1000)})
            for i in others]  # fmt: skip
    for e in junk:
        r.inject(hostile, e.wire)
    run_until(r, lambda: len(r.peers[0].log) > base + MAX_AHEAD + 10)
    assert len(r.peers[0].log) > base + MAX_AHEAD
    for p in range(n):
        if p == hostile:
            continue
        peer = r.peers[p]
        length = len(peer.log)
        held = peer._inbox.held
        assert not [i for i in held if i < length], f"party {p} holds entries behind its log"
        assert not [i for i, _ in peer._inbox.checked.values() if i < length]


# ---------------------------------------------------------------- speculation


def _bad_first_shuffle(r: Router, change: Callable[[Entry, int], Entry]) -> Tamper:
    """A tamper that sends the next shuffler (the party at seat 1) a changed copy of the
    first shuffle of the match (by the party at seat 0) first, the genuine one after."""
    done: list[bool] = []

    def tamper(sender: int, receiver: int, data: bytes) -> bytes | None:
        e = decode_entry(data)
        if done or e.kind != "shuffle" or sender != e.author:
            return data
        seating = r.peers[receiver].table.seating
        if receiver != seating[1]:
            return data
        done.append(True)
        r.queue.appendleft((sender, receiver, data))
        return change(e, e.author).wire

    return tamper


@pytest.mark.parametrize("n", [2, 3, 4, 6])
def test_a_refused_shuffle_makes_no_honest_peer_fault(n: int) -> None:
    """The first shuffler first sends the next one a copy of its shuffle with an all-zero
    `p`, then the genuine one. The next shuffler builds nothing on the bad copy, nobody is
    named, and every peer reaches the first turn on one log."""
    r = _table(n, 13, relay=True)
    r.tamper = _bad_first_shuffle(r, lambda e, a: _resign(e, a, prev=bytes(32)))
    r.start()
    r.run()
    for p in range(n):
        assert not _faults(r, p), f"party {p}: {_faults(r, p)}"
        assert r.peers[p].table.phase is Phase.TURN
    assert same_logs(r, list(range(n)))
    assert replay(e.wire for e in r.peers[0].log).entries == len(r.peers[0].log)


def test_a_stale_speculative_shuffle_is_no_equivocation() -> None:
    """Two shuffles signed by one party for one index on different `p` (one built ahead on
    an entry that did not stand) are not equivocation: only one of them continues the log."""
    r = _table(3, 14)
    r.start()
    r.run()
    t = r.peers[0].table
    shuffles = [e for e in t.log if e.kind == "shuffle"]
    e = shuffles[1]
    stale = _resign(e, e.author, prev=bytes(32))
    with pytest.raises(ValueError, match="one log"):
        check_equivocation(t.log[0], e.wire, stale.wire)
    out = r.peers[0].receive(stale.wire, r.now)
    assert not [x for x in out.events if isinstance(x, Fault)]


# ---------------------------------------------------------------- equivocation resolves


def _discards(r: Router, mover: int) -> tuple[Entry, Entry]:
    """Two valid discards the mover signs for one index (the same `p`), after its draw."""
    peer = r.peers[mover]
    t = peer.table
    seat = t.my_seat
    assert seat is not None and t.view is not None
    hand = t.view.hand(seat)
    made = []
    for slot in hand[:2]:
        index, body = t.move_body(Discard(seat, slot))
        made.append(_signed(identities(r.peers[0].table.n)[mover], t, index, t.step_prev,
                            mover, "move", body))  # fmt: skip
    return made[0], made[1]


def _drawn(n: int, seed: int) -> tuple[Router, int]:
    """A table of `n` whose first mover has drawn and is to discard."""
    r = _table(n, seed, relay=True)
    r.start()
    r.run()
    mover = r.turns[-1]
    seat = r.peers[mover].table.my_seat
    assert seat is not None
    r.act(mover, r.peers[mover].play(DrawStock(seat), r.now))
    r.run()
    assert r.turns[-1] == mover and r.peers[mover].table.phase is Phase.TURN
    return r, mover


def _void_closes(r: Router, hostile: int, honest: list[int], index: int) -> None:
    """Every honest peer names `hostile` (only), and, with nobody proposing anything, the
    void round that deals again without it completes at `index`, with one log everywhere
    (4.6: each signs it at once, behind its log if it had gone on)."""
    r.run()
    for p in honest:
        errs = _faults(r, p)
        assert errs and {e.author for e in errs} == {hostile}, (p, errs)
    for p in honest:
        assert Voided("void", (hostile,)) in r.events[p], p
        void = [e for e in r.peers[p].log if e.kind == "void"]
        assert void and void[0].index == index
        assert r.persisted[p] == r.peers[p].log[1:]
    assert same_logs(r, honest)
    rep = replay(e.wire for e in r.peers[honest[0]].log)
    assert rep.entries == len(r.peers[honest[0]].log)


@pytest.mark.parametrize("n", [3, 4, 6])
def test_an_equivocation_brings_every_honest_peer_to_one_void_at_its_index(n: int) -> None:
    """The mover signs two valid discards for one index: one to a first honest peer, the
    other to the rest. All detect it and name the mover; whoever had built nothing on the
    discard it holds signs, at once, the void there that deals again without the mover, the
    others join it, and every peer that had gone on takes that round: one log."""
    r, hostile = _drawn(n, 15)
    honest = [p for p in range(n) if p != hostile]
    d1, d2 = _discards(r, hostile)
    r.silent = {hostile}
    r.inject(hostile, d1.wire, to=honest[:1])
    r.inject(hostile, d2.wire, to=honest[1:])
    r.run()
    for p in honest:
        errs = [e for e in _faults(r, p) if isinstance(e, Equivocation)]
        assert errs and errs[0].index == d1.index
        first, second = errs[0].evidence
        assert check_equivocation(r.peers[p].log[0], first, second) == hostile
    _void_closes(r, hostile, honest, d1.index)


def test_at_two_seats_an_equivocation_after_the_honest_party_built_on_it_is_evidence() -> None:
    """At two seats the one honest party applies the first discard and moves on it; the
    second discard is then evidence against the mover, and nothing else: no honest peer can
    hold the other entry, so the log keeps the one it has (4.6)."""
    r, hostile = _drawn(2, 15)
    honest = 1 - hostile
    d1, d2 = _discards(r, hostile)
    r.silent = {hostile}
    r.inject(hostile, d1.wire, to=[honest])
    r.run()
    assert r.peers[honest].log[d1.index] == d1
    seat = r.peers[honest].table.my_seat
    assert seat is not None
    r.act(honest, r.peers[honest].play(DrawStock(seat), r.now))  # it draws on that discard
    r.run()
    r.inject(hostile, d2.wire, to=[honest])
    r.run()
    errs = [e for e in _faults(r, honest) if isinstance(e, Equivocation)]
    assert errs and errs[0].author == hostile and errs[0].index == d1.index
    assert r.peers[honest].log[d1.index] == d1
    assert not [e for e in r.peers[honest].log if e.kind == "void"]
    assert r.persisted[honest] == r.peers[honest].log[1:]


@pytest.mark.parametrize("n", [3, 4])
def test_a_refused_copy_is_still_evidence_of_equivocation(n: int) -> None:
    """A first honest peer gets, in the mover's place, an entry of the wrong kind signed by
    the mover (refused as out of turn), after a copy with a wrong `p` (refused, and no
    evidence); the others get a valid discard for that index. The refused entry is kept as
    evidence: when the discard reaches the first peer too, it names
    the mover like the others, and the void closes at that index."""
    r, hostile = _drawn(n, 16)
    honest = [p for p in range(n) if p != hostile]
    d1, d2 = _discards(r, hostile)
    t = r.peers[honest[0]].table
    wrong = _signed(identities(n)[hostile], t, d1.index, d1.prev, hostile, "shares",
                    {"shares": None})  # fmt: skip
    r.silent = {hostile}
    r.inject(hostile, _resign(d1, hostile, prev=bytes(32)).wire, to=honest[:1])  # no evidence
    r.inject(hostile, wrong.wire, to=honest[:1])
    r.run()
    assert [e for e in r.events[honest[0]] if isinstance(e, Refused)]
    r.inject(hostile, d2.wire, to=honest)
    r.run()
    _void_closes(r, hostile, honest, d1.index)


def test_a_copy_with_another_p_is_no_equivocation_and_the_hand_goes_on() -> None:
    """The others apply the mover's discard; then a first peer gets a copy of it with a wrong
    `p` (refused, and relayed to the others, who hold the genuine one at that index), and
    the genuine one after. Nobody is named, and everybody goes on from the genuine one."""
    n = 4
    r, hostile = _drawn(n, 17)
    honest = [p for p in range(n) if p != hostile]
    d1, _ = _discards(r, hostile)
    bad = _resign(d1, hostile, prev=bytes(32))
    r.silent = {hostile}
    r.inject(hostile, d1.wire, to=honest[1:])
    r.run()
    r.inject(hostile, bad.wire, to=honest[:1])
    r.run()
    r.inject(hostile, d1.wire, to=honest[:1])
    r.run()
    for p in honest:
        assert not _faults(r, p), (p, _faults(r, p))
        assert len(r.peers[p].log) > d1.index and r.peers[p].log[d1.index].wire == d1.wire
    assert same_logs(r, honest)


# ---------------------------------------------------------------- only LogError


def test_a_void_after_the_match_is_decided_raises_only_a_log_error() -> None:
    """The match is over (one hand to 300) but one party withholds its `final` entry; the
    others sign a void round that would deal again. `Table.apply` accepts it or refuses it
    with a `LogError`, nothing else, and so does the verifier."""
    n, hostile = 4, 2

    def withhold(sender: int, receiver: int, data: bytes) -> bytes | None:
        e = decode_entry(data)
        return None if e.author == hostile and e.kind == "final" else data

    r = _table(n, 18, relay=True, tamper=withhold)
    r.manual = set()
    r.start()
    r.run()
    honest = [p for p in range(n) if p != hostile]
    t = r.peers[honest[0]].table
    assert t.phase is Phase.FINAL and not t.closed
    verifier = Table(t.log[0])
    for e in t.log[1:]:
        verifier.apply(e)
    prev = verifier.void_prev()
    for k, p in enumerate(honest):
        e = _signed(identities(n)[p], t, len(t.log) + k, prev, p, "void",
                    {"action": "void", "silent": [hostile]})  # fmt: skip
        try:
            verifier.apply(e)
        except LogError:
            break
    # The peers too, once their clocks have seen the final round wait for the hostile party:
    # whatever the round does, no other exception (a proposal the peer may no longer make,
    # one already agreed, is refused by `propose_void` with its documented ValueError).
    r.advance(2 * t.terms.timeout_ms / 1000)
    r.run()
    for p in honest:
        try:
            out = r.peers[p].propose_void("void", r.now, (hostile,))
        except ValueError:
            continue
        r.act(p, out)
        r.run()


def test_a_saved_log_is_cut_back_with_the_peer(tmp_path: Path) -> None:
    """A host that saves what its peer persists cuts its saved log where the peer rolled
    back (`Output.rollback`: to the equivocated index, once the void round there is
    complete), then appends that round; its saved voids are what `Output.votes` says."""
    from buraco_p2p.play.store import TableStore

    r, hostile = _drawn(3, 19)
    me, other = [p for p in range(3) if p != hostile]
    d1, d2 = _discards(r, hostile)
    store = TableStore(tmp_path / "t")
    store.path.mkdir()
    store.append([e.wire for e in r.peers[me].log])
    cuts = []

    def save(out: Output) -> None:
        if out.rollback is not None:
            cuts.append(out.rollback)
            store.cut(out.rollback)
        store.append([e.wire for e in out.persist])
        if out.votes is not None:
            store.save_votes(out.votes)

    out = r.peers[me].receive(d1.wire, r.now)
    save(out)
    assert len(store.load_log()) == d1.index + 1
    queue = [(me, w) for w in r.peers[other].receive(d2.wire, r.now).send]
    queue += [(me, d2.wire), (other, d1.wire)]
    while queue:
        to, wire = queue.pop(0)
        got = r.peers[to].receive(wire, r.now)
        if to == me:
            save(got)
        back = other if to == me else me
        queue += [(back, w) for w in got.send + got.relay]
    assert cuts == [d1.index]
    assert store.load_log() == [e.wire for e in r.peers[me].log]
    assert r.peers[me].log[d1.index].kind == "void"
    assert [decode_entry(w).index for w in store.load_votes()] == [
        e.index for e in r.peers[me].log if e.kind == "void" and e.author == me
    ]


@pytest.mark.parametrize("n", [3, 4])
def test_an_equivocating_shuffler_is_named_and_the_next_shuffler_is_not(n: int) -> None:
    """The first shuffler sends the next one a second shuffle for its index (same `p`, a
    broken proof), the others its genuine one. The next shuffler builds its own shuffle
    ahead on the copy it got, which is then refused: it names the first shuffler, as every
    other peer does once the copies are relayed, and one void round closes at that index."""
    r = _table(n, 20, relay=True)

    def broken(e: Entry, author: int) -> Entry:
        proof = e.body["proof"]
        return _resign(
            e, author, body={**e.body, "proof": proof[:40] + bytes([proof[40] ^ 1]) + proof[41:]}
        )

    r.tamper = _bad_first_shuffle(r, broken)
    r.start()
    run_until(r, lambda: any(_faults(r, p) for p in range(n)))
    r.tamper = None
    t = r.peers[0].table
    hostile = t.seating[0]
    r.silent = {hostile}
    r.run()
    honest = [p for p in range(n) if p != hostile]
    index = 1 + 2 * n + n  # the genesis, the seat draw, the keys round: the first shuffle
    _void_closes(r, hostile, honest, index)


def test_hostile_entries_in_every_phase_raise_only_log_errors(played_match: Router) -> None:
    """At positions all through a whole match, the party the table expects signs entries
    of every kind with bodies taken from elsewhere in the log and mangled: a verifier's
    `Table.apply` accepts each or refuses it with a `LogError`, never anything else."""
    log = played_match.peers[0].log
    ids = identities()
    rnd = random.Random(21)
    by_kind: dict[str, list[dict[str, object]]] = {}
    for e in log[1:]:
        by_kind.setdefault(e.kind, []).append(dict(e.body))
    kinds = [*sorted(by_kind), "void"]
    positions = [*sorted(rnd.sample(range(2, len(log)), 14)), len(log) - 1]
    verifier = Table(log[0])
    done = 1
    outcomes = {"accepted": 0, "refused": 0}
    for pos in positions:
        for e in log[done:pos]:
            verifier.apply(e)
        done = pos
        author = verifier.expected_author(pos)
        assert author is not None
        for _ in range(12):
            kind = rnd.choice([verifier.rule.kind] * 3 + kinds)
            body = _hostile_body(rnd, kind, by_kind, verifier.n)
            e = _signed(ids[author], verifier, pos, verifier.step_prev, author, kind, body)
            trial = table_copy(verifier)
            try:
                trial.apply(e)
                outcomes["accepted"] += 1
            except LogError as exc:
                assert exc.author in (author, None) and exc.evidence in ((e.wire,), ())
                outcomes["refused"] += 1
    assert outcomes["refused"] > 100


def _hostile_body(
    rnd: random.Random, kind: str, by_kind: dict[str, list[dict[str, object]]], n: int
) -> dict[str, object]:
    if kind == "void":
        body: dict[str, object] = {
            "action": rnd.choice(["void", "end", "replace", "other"]),
            "silent": sorted(rnd.sample(range(n), rnd.randrange(1, n))),
        }
        if body["action"] == "replace":
            body["keys"] = [Identity.from_seed(bytes([rnd.randrange(256)]) * 32, "k").public.raw
                            for _ in body["silent"]]  # type: ignore[attr-defined]  # fmt: skip
        return body
    body = dict(rnd.choice(by_kind[kind]))
    for key in list(body):
        roll = rnd.random()
        value = body[key]
        if roll < 0.2:
            body[key] = None
        elif roll < 0.4 and isinstance(value, bytes):
            body[key] = bytes(rnd.randrange(256) for _ in range(len(value)))
        elif roll < 0.5 and isinstance(value, list):
            body[key] = [rnd.randrange(-(2**31), 2**31) for _ in value]
        elif roll < 0.6:
            body[key] = rnd.choice([b"", 0, -1, 2**40, "x", [], {}])
    return body


def test_the_evidence_vectors_follow_the_rule_as_the_spec_states_it() -> None:
    """protocol/vectors/evidence.json rechecked from docs/protocol.md 4.6 alone (msgpack and
    Ed25519 from `cryptography`, nothing of buraco_p2p): a pair is equivocation exactly when
    both entries have one table, index, author and `p`, differ, are not one `void` and one
    of another kind nor two `void`s of different tries, and both signatures verify under the
    key in force."""
    vec = json.loads((VECTOR_DIR / "evidence.json").read_text(encoding="utf-8"))
    verdicts = []
    for case in vec["cases"]:
        key = Ed25519PublicKey.from_public_bytes(bytes.fromhex(case["key_in_force"]))
        a, b = (bytes.fromhex(case[k]) for k in ("first", "second"))
        ea, eb = (msgpack.unpackb(w, raw=False) for w in (a, b))

        same = all(ea[k] == eb[k] for k in "tiap")
        voids = (ea["k"] == "void") == (eb["k"] == "void")
        if ea["k"] == eb["k"] == "void":  # 4.6: two tries of a void are two votes
            voids = ea["b"].get("try", 0) == eb["b"].get("try", 0)
        verdict = same and a != b and voids and _verifies(key, ea) and _verifies(key, eb)
        assert verdict == case["equivocation"], case["why"]
        assert ea["i"] == case["index"] and ea["a"] == case["author"]
        verdicts.append(verdict)
    assert True in verdicts and False in verdicts


def _verifies(key: Ed25519PublicKey, e: dict[str, Any]) -> bool:
    """4.1: the signature over the domain and the canonical map without "s" (decoded in
    its canonical order, so packing it again keeps that order)."""
    unsigned = {k: v for k, v in e.items() if k != "s"}
    data = b"buraco-p2p/log/v1/sign\x00" + msgpack.packb(unsigned, use_bin_type=True)
    try:
        key.verify(e["s"], data)
    except InvalidSignature:
        return False
    return True


@pytest.mark.parametrize("n", [2, 4])
def test_two_entries_for_a_later_step_on_a_made_up_p_are_no_evidence(n: int) -> None:
    """A party signs two different entries for an index of a step not yet begun, both on
    the same made-up `p`: they are held, judged when that step begins, and dropped there as
    not continuing the log; nobody is named and the hand goes on."""
    r = _table(n, 22, relay=True)
    r.start()
    run_until(r, lambda: min(len(r.peers[p].log) for p in range(n)) > 2 * n)
    hostile = 1
    t = r.peers[0].table
    index = len(t.log) + n + 1  # past the keys round under way
    made_up = bytes(range(32))
    for c in (b"\x01", b"\x02"):
        e = _signed(identities(n)[hostile], t, index, made_up, hostile, "shuffle",
                    {"deck": c, "proof": c})  # fmt: skip
        r.inject(hostile, e.wire)
    r.run()
    for p in range(n):
        assert not _faults(r, p), (p, _faults(r, p))
        assert r.peers[p].table.phase is Phase.TURN
    assert same_logs(r, list(range(n)))


def test_two_entries_for_a_later_step_on_its_real_p_are_judged_when_it_begins() -> None:
    """The first shuffler signs two different shuffles on the real `p` before the keys round
    is complete at the others: they are held, and when the shuffle step begins every honest
    peer finds the equivocation, names the shuffler, and one void round closes there."""
    n = 3
    r = _table(n, 23, relay=True)
    r.start()
    run_until(r, lambda: min(len(r.peers[p].log) for p in range(n)) >= 1 + 2 * n)
    ahead = snapshot(r)
    run_until(ahead, lambda: ahead.peers[0].table.phase is Phase.SHUFFLE)
    t = ahead.peers[0].table
    index, prev = len(t.log), t.step_prev
    hostile = t.expected_author(index)
    assert hostile is not None
    honest = [p for p in range(n) if p != hostile]
    assert len(r.peers[honest[0]].log) < index
    r.silent = {hostile}
    for c in (b"\x01", b"\x02"):
        e = _signed(identities(n)[hostile], t, index, prev, hostile, "shuffle",
                    {"deck": c, "proof": c})  # fmt: skip
        r.inject(hostile, e.wire, to=honest)
    r.run()
    for p in honest:
        errs = [e for e in _faults(r, p) if isinstance(e, Equivocation)]
        assert errs and errs[0].index == index and errs[0].author == hostile
    _void_closes(r, hostile, honest, index)


@pytest.mark.parametrize("n", [3, 4])
def test_two_entries_of_a_party_the_step_no_longer_waits_for_stop_nothing(n: int) -> None:
    """A party that has made its entry in the step under way signs two different entries,
    on the step's `p`, for a later index of that step, whose entry is another party's: they
    are evidence (the peer names the party) but, since the step does not wait for that
    party when the log gets there, neither could ever be applied and the table does not
    stop. Stopped there, the peers would close a void round naming that party which a
    verifier, holding no evidence, refuses: every honest log would fail `verify`."""
    r = _table(n, 23, relay=True)
    r.start()

    def mid_step() -> bool:
        t = r.peers[0].table
        return bool(t.step_hashes) and len(t.authors) - len(t.step_hashes) >= 2

    run_until(r, mid_step)
    t = r.peers[0].table
    start = t.step_start
    hostile = t.expected_author(start)  # its entry is in the step already
    index = start + len(t.authors) - 1  # the step's last place, another party's
    assert hostile is not None and t.expected_author(index) != hostile
    for c in (b"\x01", b"\x02"):
        e = _signed(identities(n)[hostile], t, index, t.step_prev, hostile, "move", {"m": c})
        r.act(0, r.peers[0].receive(e.wire, r.now))
    errs = [e for e in _faults(r, 0) if isinstance(e, Equivocation)]
    assert errs and errs[0].index == index and errs[0].author == hostile
    r.run()
    run_until(r, lambda: min(len(r.peers[p].log) for p in range(n)) > index + n)
    for p in range(n):
        assert r.peers[p].table.fault is None and not r.peers[p].table.voids, p
    assert same_logs(r, list(range(n)))
    assert replay(e.wire for e in r.peers[0].log).hands == 0  # it checks, as verify does


@pytest.mark.parametrize("n", [3, 4])
def test_two_entries_for_another_partys_place_stop_nothing_though_the_step_waits_for_their_author(
    n: int,
) -> None:
    """A party whose own place in the step under way is still to come signs two different
    entries, on the step's `p`, for the index at the end of party 0's log, another party's
    place. They are evidence (party 0 names their author), but the log takes only that other
    party's entry there: a peer whose log went past it refuses them as out of turn, so party
    0 must not stop there either. Stopped (the step did wait for their author, at its own
    place), party 0 refused the entry due there, the others went on, and their void named
    it, present and answering (S2)."""
    r = _table(n, 31, relay=True)
    r.start()

    def two_to_come() -> bool:  # in the hand's shares, past the seat draw and the keys
        t = r.peers[0].table
        wf = t.waiting_for
        return len(t.log) > 4 * n and len(wf) >= 2 and 0 not in wf[:1] and \
            any(p not in (0, wf[0]) for p in wf[1:])  # fmt: skip

    run_until(r, two_to_come)
    t = r.peers[0].table
    index, owner = len(t.log), t.waiting_for[0]
    hostile = next(p for p in t.waiting_for[1:] if p != 0)
    ahead = snapshot(r)
    run_until(ahead, lambda: len(ahead.peers[0].log) > index)
    due = ahead.peers[0].log[index]
    assert due.author == owner
    held = r.tamper = lambda sender, to, data: None if to == 0 and data == due.wire else data
    for c in (b"\x01", b"\x02"):
        e = _signed(identities(n)[hostile], t, index, t.step_prev, hostile, "move", {"m": c})
        r.act(0, r.peers[0].receive(e.wire, r.now))
    errs = [e for e in _faults(r, 0) if isinstance(e, Equivocation)]
    assert errs and errs[0].index == index and errs[0].author == hostile
    assert r.peers[0].table.fault is None  # the log takes the owner's entry there, not theirs
    r.run()
    assert r.tamper is held and len(r.peers[owner].log) > index
    r.tamper = None
    r.act(0, r.peers[0].receive(due.wire, r.now))  # it comes late, as a relay may bring it
    r.run()
    assert len(r.peers[0].log) > index and r.peers[0].table.fault is None
    assert one_log(r, list(range(n)))
    assert replay(e.wire for e in r.peers[0].log).hands == 0  # it checks, as verify does


@pytest.mark.parametrize("n", [3, 4])
def test_two_entries_held_for_a_step_whose_author_is_another_are_dropped_as_evidence(
    n: int,
) -> None:
    """A party signs two different entries, on the right `p`, for the first index of the
    next step, where the entry due is another party's. Ahead of the step under way they
    are only held (not yet judged); when the log gets there they prove equivocation, but
    the step does not wait for their author, so the table does not stop: the peer files
    the evidence, the table refuses them out of turn, and they are held no more. Held on,
    they would stay the entry `work` offers next and the peer would stay busy with an
    entry it can neither apply nor drop (its host loops on `busy`)."""
    r = _table(n, 29, relay=True)
    r.start()

    def mid_step() -> bool:
        t = r.peers[0].table
        return len(t.log) > 2 * n and 0 < len(t.step_hashes) < len(t.authors)

    run_until(r, mid_step)
    t = r.peers[0].table
    index = t.step_start + len(t.authors)  # the next step's first place
    ahead = snapshot(r)
    run_until(ahead, lambda: len(ahead.peers[0].log) > index)
    due = ahead.peers[0].log[index]  # what the next step opens with
    hostile = next(p for p in range(1, n) if p != due.author)
    # the entry due there never reaches party 0, which waits at `index`
    r.tamper = lambda sender, to, data: None if to == 0 and data == due.wire else data
    for c in (b"\x01", b"\x02"):
        e = _signed(identities(n)[hostile], t, index, due.prev, hostile, "move", {"m": c})
        r.act(0, r.peers[0].receive(e.wire, r.now))
    assert len(r.peers[0].log) < index and (hostile, index) not in r.peers[0].evidence
    r.run()
    peer = r.peers[0]
    assert len(peer.log) == index and peer.table.expected_author(index) == due.author
    assert peer.table.fault is None and (hostile, index) in peer.evidence
    assert not peer._inbox.held.get(index, {}).get(hostile) and not peer.busy
