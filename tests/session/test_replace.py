"""A party that does not come back is replaced: the present parties sign a "replace" void
naming a new identity for its seat; the hand under way is dealt again, and from that hand on
the new identity (an heir peer that followed the log) plays the seat with fresh hand keys."""

from __future__ import annotations

import dataclasses

import pytest
from session_helpers import bot_chooser, identities, resign, same_logs, stalled

from buraco_p2p.crypto import DeterministicRandomSource
from buraco_p2p.net.channel.identity import Identity
from buraco_p2p.rules import get_preset
from buraco_p2p.session import (
    BadSignature,
    Fault,
    MatchEnded,
    Peer,
    Refused,
    RejectedEntry,
    Rewrite,
    Router,
    Voided,
    VoidProposed,
    decode_entry,
    make_entry,
    make_genesis,
    replay,
)
from buraco_p2p.session.policy import Policy
from buraco_p2p.session.table import Table

GONE = 2


def _stalled(seed: int) -> tuple[Router, Identity]:
    """A short match with party GONE silent once the first hand is under way, and the others
    past the table's timeout; returns the router and an heir identity for the seat."""
    return stalled(seed, b"replace-table-01", GONE, 1.0)


def _heir(r: Router, identity: Identity) -> Peer:
    """The heir follows the log from the genesis (what a `sync` would give it)."""
    log = r.peers[0].log
    heir = Peer(log[0], identity, DeterministicRandomSource(b"\x55" * 32), r.now, heir=True)
    for e in log[1:]:
        heir.receive(e.wire, r.now)
    assert heir.party == -1 and len(heir.log) == len(log)
    return heir


def _replaced(seed: int) -> tuple[Router, Peer, Identity]:
    """A match in which the present parties replace party GONE by an heir that follows the
    log, and the heir plays the match out: the router, the heir and its identity."""
    r, heir_id = _stalled(seed)
    present = [p for p in range(4) if p != GONE]
    heir = _heir(r, heir_id)
    r.peers[GONE] = heir
    r.silent = set()
    new = heir_id.public.raw
    r.act(present[0], r.peers[present[0]].propose_void("replace", r.now, (GONE,), (new,)))
    r.run()
    for p in present[1:]:
        assert VoidProposed(present[0], "replace", (GONE,), (new,)) in r.events[p]
        r.act(p, r.peers[p].join_void(r.now))
    r.run()
    return r, heir, heir_id


def test_a_silent_party_is_replaced_and_the_heir_plays_the_match_out() -> None:
    r, heir, heir_id = _replaced(41)
    present = [p for p in range(4) if p != GONE]
    new = heir_id.public.raw
    assert heir.party == GONE
    for p in range(4):
        peer = r.peers[p]
        assert peer.table.closed, p
        assert Voided("replace", (GONE,)) in r.events[p]
        assert [e for e in r.events[p] if isinstance(e, MatchEnded)]
    assert same_logs(r, [0, 1, 2, 3])
    log = r.peers[0].log
    (at,) = [e.index for e in log if e.kind == "void" and e.author == present[-1]]
    later = [e for e in log[at + 1 :] if e.author == GONE]
    assert later  # the heir's keys, shuffles, moves...
    for e in later:
        e.verify(tuple(r.peers[0].table.keys))
    assert r.peers[0].table.keys[GONE].raw == new
    rep = replay(e.wire for e in log)
    assert rep.closed and rep.hands >= 1
    assert rep.successions == ((at, GONE, heir_id.public.fingerprint()),)
    t = Table(log[0])
    for e in log[1:]:
        t.apply(e)
    assert t.successions == [(at, GONE, r.peers[0].table.keys[GONE])]
    # the seat's first entry after the replacement, signed with the genesis key instead
    first = later[0]
    forged = resign(first, GONE)
    v = Table(log[0])
    for e in log[1 : first.index]:
        v.apply(e)
    with pytest.raises(BadSignature):
        v.apply(forged)


def test_an_heir_cut_back_past_its_own_entries_replays_them_from_the_log() -> None:
    """An heir's log cut back to a point after the round that seated it replays the prefix
    as a verifier, its own hand keys and shares too, and the heir takes its seat again when
    the round that follows is complete, as any party does: seated again by the replace round
    in the prefix, it would draw its hand keys anew, and the cards its own entries opened
    would open to no card (a roll-back there was refused for good, and its log forked)."""
    _, heir, _ = _replaced(41)
    log = heir.log
    (at,) = [e.index for e in log if e.kind == "void" and e.author != GONE][-1:]
    own = [e.index for e in log[at + 1 :] if e.author == GONE and e.kind != "void"]
    assert len(own) > 3  # its keys, its shuffle, its deal's shares, its moves
    for length in sorted({own[1] + 1, own[len(own) // 2] + 1, len(log) - 1}):
        for seated in (True, False):
            cut = heir.table.rewound(length, seated=seated)
            assert [e.hash for e in cut.log] == [e.hash for e in log[:length]]
            assert cut.me is None and cut.heir is None
            assert cut.keys[GONE] == heir.table.keys[GONE]
        assert cut._resume is None
        assert heir.table.rewound(length)._resume == (GONE, heir.table.rng)


@pytest.mark.parametrize(
    "keys, why",
    [
        (lambda: (identities()[1].public.raw,), "already at the table"),
        (lambda: (b"\x01" + b"\x00" * 31,), "small-order"),
        (lambda: (b"\x00" * 31,), "32 bytes"),
        (lambda: (), "one identity key per silent party"),
    ],
)
def test_a_replace_naming_a_bad_key_is_refused_before_anything_is_signed(
    keys: object, why: str
) -> None:
    r, _ = _stalled(43)
    p = next(p for p in range(4) if p != GONE)
    with pytest.raises(ValueError, match=why):
        r.peers[p].propose_void("replace", r.now, (GONE,), keys())  # type: ignore[operator]
    assert r.peers[p].agreement is None


def test_a_replace_round_naming_a_seated_key_is_refused_by_the_table() -> None:
    """Even signed by every present party, a replace that names a key already at the table
    is refused: validate before anyone sends the new identity anything."""
    r, _ = _stalled(44)
    t = r.peers[0].table
    present = [p for p in range(4) if p != GONE]
    seated = identities()[present[0]].public.raw
    v = Table(t.log[0])
    for e in t.log[1:]:
        v.apply(e)
    prev = v.void_prev()
    for k, p in enumerate(present):
        e = make_entry(
            identities()[p], table=t.terms.table_id, index=len(t.log) + k, prev=prev,
            author=p, kind="void",
            body={"action": "replace", "silent": [GONE], "keys": [seated]},
        )  # fmt: skip
        if k == 0:
            with pytest.raises(RejectedEntry, match="already at the table"):
                v.apply(e)
            break


def test_the_heirs_first_entries_may_arrive_before_the_replace_round_is_whole() -> None:
    """A present party hears the heir's hand key before the last void entry of the round
    that seats it: the entry is held (the held void names its key) and applied in turn."""
    r, heir_id = _stalled(45)
    present = [p for p in range(4) if p != GONE]
    heir = _heir(r, heir_id)
    r.peers[GONE] = heir
    r.silent = set()
    new = heir_id.public.raw
    late: list[tuple[int, int, bytes]] = []
    heard_early: list[bool] = []

    def tamper(sender: int, receiver: int, data: bytes) -> bytes | None:
        e = decode_entry(data)
        if (
            receiver == present[0]
            and e.kind == "void"
            and e.author == present[-1]
            and not heard_early
        ):
            late.append((sender, receiver, data))
            return None
        if receiver == present[0] and e.author == GONE and late and not heard_early:
            heard_early.append(True)
            r.queue.extend(late)  # the void follows the heir's entry
        return data

    r.tamper = tamper
    for p in present:
        r.act(p, r.peers[p].propose_void("replace", r.now, (GONE,), (new,)))
    r.run()
    assert heard_early
    for p in range(4):
        assert r.peers[p].table.closed, p
    assert same_logs(r, [0, 1, 2, 3])
    assert not [e for e in r.events[present[0]] if isinstance(e, Refused | Fault)]


def test_an_entry_under_a_proposed_key_is_dropped_if_the_seat_does_not_pass() -> None:
    """Held on the strength of a proposed replacement that never completes, an entry signed
    by the would-be heir is dropped when its turn comes, without stopping the table."""
    r, heir_id = _stalled(46)
    present = [p for p in range(4) if p != GONE]
    t = r.peers[present[0]].table
    r.act(present[1], r.peers[present[1]].propose_void(
        "replace", r.now, (GONE,), (heir_id.public.raw,)))  # fmt: skip
    r.run()
    index = len(t.log)
    expected = t.expected_author(index)
    assert expected == GONE
    forged = make_entry(
        heir_id, table=t.terms.table_id, index=index, prev=t.step_prev, author=GONE,
        kind=t.rule.kind, body={},
    )  # fmt: skip
    out = r.peers[present[0]].receive(forged.wire, r.now)
    assert not [e for e in out.events if isinstance(e, Fault)]
    assert [e for e in out.events if isinstance(e, Refused) and isinstance(e.error, BadSignature)]
    assert r.peers[present[0]].table.fault is None


@pytest.mark.parametrize("who", ["present", "retired"])
def test_no_equivocation_before_a_replace_round_cuts_it(who: str) -> None:
    """After the heir is seated, a second entry turns up for an index before the "replace"
    round: signed by a present party, or by the replaced party's retired key for an index it
    authored before it left. Both are evidence and nothing else (a `Rewrite`): the round's
    signers, a majority, committed to everything before it, so it is final (4.6). The heir
    keeps its seat, every log keeps the round and the hand after it."""
    r, heir_id = _stalled(43)
    present = [p for p in range(4) if p != GONE]
    heir = _heir(r, heir_id)
    r.peers[GONE] = heir
    r.silent = set()
    r.manual = set(range(4))
    new = heir_id.public.raw
    r.act(present[0], r.peers[present[0]].propose_void("replace", r.now, (GONE,), (new,)))
    r.run()
    for p in present[1:]:
        r.act(p, r.peers[p].join_void(r.now))
    r.run()
    assert heir.party == GONE and heir.seated
    log = list(heir.log)
    point = min(e.index for e in log if e.kind == "void")
    assert len(log) > point + 3  # the next hand is under way
    if who == "present":
        e = log[point - 1]
        assert e.author != GONE and e.kind != "void"
    else:
        e = max((x for x in log[:point] if x.author == GONE), key=lambda x: x.index)
    other = resign(e, e.author, body={**e.body, "x": 1})
    for p in range(4):
        peer = r.peers[p]
        before = [x.wire for x in peer.log]
        assert e.index < peer.settled
        out = peer.receive(other.wire, r.now)
        assert out.rollback is None and not out.send
        (ev,) = [x for x in out.events if isinstance(x, Rewrite)]
        assert ev.error.author == e.author and ev.error.index == e.index
        assert not any(isinstance(x, Fault) for x in out.events)
        assert [x.wire for x in peer.log] == before
    assert heir.party == GONE and heir.seated and heir.table.keys[GONE].raw == new


def test_no_seat_is_taken_over_before_the_seats_are_drawn() -> None:
    """Before the seats are drawn a void closes the log (4.5, "Abandonment"), and the table
    refuses a "replace" round there. So no party signs one: a party that had would apply no
    entry past its void and see its own round refused, and the table would stand for good.
    The host's policy proposes "end" instead, and nobody joins a "replace" another signed."""
    rules = dataclasses.replace(get_preset("us"), target_score=300)
    g = make_genesis(b"replace-table-02", identities(), rules, timeout_ms=1000)
    peers = [Peer(g, i, DeterministicRandomSource(bytes([45, n]) * 16))
             for n, i in enumerate(identities())]  # fmt: skip
    r = Router(peers, bot_chooser(45), relay=True)
    r.silent = {GONE}
    r.start()
    r.run()
    r.advance(2.0)
    r.run()
    present = [p for p in range(4) if p != GONE]
    host, other = r.peers[present[0]], r.peers[present[1]]
    assert host.table.match is None and GONE in host.overdue
    new = Identity.from_seed(b"\x78" * 32, "heir").public.raw
    with pytest.raises(ValueError, match="only once the seats are drawn"):
        host.propose_void("replace", r.now, (GONE,), (new,))
    assert host.agreement is None

    # a "replace" signed anyway, by a client that skips the check, is not joined
    t = other.table
    v = Table(t.log[0])
    for e in t.log[1:]:
        v.apply(e)
    void = make_entry(
        identities()[present[0]], table=t.terms.table_id, index=len(t.log), prev=v.void_prev(),
        author=present[0], kind="void", body={"action": "replace", "silent": [GONE], "keys": [new]},
    )  # fmt: skip
    heard = other.receive(void.wire, r.now)
    assert VoidProposed(present[0], "replace", (GONE,), (new,)) in heard.events
    assert other.join_void(r.now).send == [] and other.agreement is None

    # the host's policy, with a replacer that must not be asked, proposes "end"
    def replacer(silent: tuple[int, ...]) -> str:
        raise AssertionError(f"asked to replace {silent} before the seats are drawn")

    policy = Policy("replace", agree_any=True, replacer=replacer)
    assert "replace" not in policy.choices(host) and "end" in policy.choices(host)
    r.act(present[0], policy.tick(host, r.now))
    assert host.agreement is not None and host.agreement.action == "end"
