"""What a restarted peer takes up again from its votes file: every void and decline it signed
that still counts, and a dispute only where it holds the evidence of one (docs/protocol.md
4.6 rule 3, 4.7).

Each test is a hostile party's abuse that named an honest party before these rules: a void
given up at the end of the log, taken up after a restart as the vote of a dispute, was
retried as one and named a present party; a flood of voids to decline pushed a peer's real
vote out of its votes file, and after a restart it signed another at the same point and try.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from session_helpers import identities
from test_held_hostage import LIMIT, _stalled_turn

from buraco_p2p.crypto import DeterministicRandomSource
from buraco_p2p.play.store import TableStore
from buraco_p2p.session import Fault, Peer, Router, decode_entry, make_entry
from buraco_p2p.session.entry import Entry
from buraco_p2p.session.errors import Equivocation
from buraco_p2p.session.table import Table


def _restart(r: Router, party: int, votes: list[bytes]) -> Peer:
    """`party` restarts from the log it saved and the votes given (its votes file)."""
    old = r.peers[party]
    fresh = Peer(old.log[0], identities(len(r.peers))[party],
                 DeterministicRandomSource(bytes([44, party]) * 16), r.now)  # fmt: skip
    fresh.start(r.now)
    for e in r.persisted[party]:
        fresh.receive(e.wire, r.now)
    assert [e.wire for e in fresh.log] == [e.wire for e in old.log]
    for w in votes:
        r.act(party, fresh.restore_vote(w))
    r.peers[party] = fresh
    return fresh


def _void_of(table: Table, party: int, point: int, silent: tuple[int, ...], action: str,
             attempt: int = 0) -> Entry:  # fmt: skip
    active = [p for p in range(table.n) if p not in silent]
    body: dict[str, object] = {"action": action, "silent": list(silent)}
    if attempt:
        body["try"] = attempt
    return make_entry(identities(table.n)[party], table=table.terms.table_id,
                      index=point + active.index(party), prev=table.prev_at(point),
                      author=party, kind="void", body=body)  # fmt: skip


N, H, X, R, W = 4, 0, 1, 2, 3  # four seats: H hostile, X late on its turn, R and W honest


@pytest.mark.parametrize("restart", [False, True])
def test_a_void_given_up_at_the_end_of_the_log_is_no_dispute_after_a_restart(
    restart: bool,
) -> None:
    """R signs a void naming X at X's turn (point P); H sends W two entries of its own for
    index P (X's place: evidence only, the table goes on); X's move comes, W goes on, and R is
    released and goes on too. R restarts from its files; H signs, to R, every void R signs at
    P. R stands by no dispute at P (it holds no evidence of one by a party its void names), so
    it signs nothing more there, and nobody is named."""
    r = _stalled_turn(N, X)
    point = len(r.peers[R].log)
    allowed: set[bytes] = set()
    r.tamper = lambda s, d, data: None if s == H and data not in allowed else data
    r.act(R, r.peers[R].propose_void("end", r.now, silent=(X,)))
    r.run()
    t = r.peers[W].table
    for k in (1, 2):
        twin = make_entry(identities(N)[H], table=t.terms.table_id, index=point,
                          prev=t.step_prev, author=H, kind="shares", body={"n": k})  # fmt: skip
        allowed.add(twin.wire)
        r.queue.append((H, W, twin.wire))
    r.run()
    assert (H, point) in r.peers[W].evidence
    r.silent = set()
    out = r.peers[X].play(r.choose(X, r.peers[X].table.view), r.now)
    r.persisted[X] += out.persist
    for w in out.send:
        r.inject(X, w, to=[W])
    r.run()
    old = r.peers[R]
    assert len(old.log) > point and old.agreement is None  # released: it went on
    fresh = _restart(r, R, list(old.votes)) if restart else old
    assert fresh._ledger.open_disputes() == [] and not fresh.disputing
    for w in r.peers[W].standing():  # W's answer to R's `sync`
        r.inject(W, w, to=[R])
    echoed: set[bytes] = set()
    for _ in range(60):
        for w in [w for w in fresh.votes if w not in echoed]:
            echoed.add(w)
            e = decode_entry(w)
            if e.body.get("action") == "decline":
                continue
            silent = tuple(e.body["silent"])
            mine = _void_of(fresh.table, H, e.index - [p for p in range(N)
                                                        if p not in silent].index(R),
                            silent, e.body["action"], e.body.get("try", 0)).wire  # fmt: skip
            allowed.add(mine)
            r.queue.append((H, R, mine))
        r.advance(0.25 * LIMIT)
        for p in (X, R, W):
            r.act(p, r.peers[p].tick(r.now, linked=[q for q in range(N) if q != p]))
        r.run()
    for p in (R, W):
        named = [e.body["silent"] for e in r.peers[p].log[point:] if e.kind == "void"]
        assert not any(W in silent for silent in named), (p, named)
    assert not any(e.index < len(fresh.log) and e.body.get("try") for e in
                   map(decode_entry, fresh.votes))  # no retry behind its log  # fmt: skip


def test_every_vote_and_decline_survives_a_restart_through_the_votes_file(
    tmp_path: Path,
) -> None:
    """Parties 2 and 3 sign a void ending the match without party 1 (gone on its turn); the
    hostile party 0 sends party 3 voids at every point and try behind its log, which it
    declines, each saved with its vote. Party 3 restarts from its votes file (the real
    store's), and party 0 proposes another action at that point: party 3 stands by the vote
    it signed, signs no second one, and is named by nobody."""
    n, x, h = 4, 1, 0
    r = _stalled_turn(n, x)
    r.act(2, r.peers[2].propose_void("end", r.now, silent=(x,)))
    r.run()
    r.act(3, r.peers[3].join_void(r.now))
    r.run()
    p3 = r.peers[3]
    length = len(p3.log)
    assert len(p3.votes) == 1
    vote = p3.votes[0]
    for point in range(p3.settled, length):
        for attempt in range(n):
            v = _void_of(p3.table, h, point, (x,), "end" if attempt else "void", attempt)
            p3.receive(v.wire, r.now)
    assert len(p3.votes) > 16  # (the votes file kept the latest 16)
    store = TableStore(tmp_path)
    store.save_votes(list(p3.votes))
    loaded = store.load_votes()
    assert loaded == p3.votes
    fresh = _restart(r, 3, loaded)
    other = _void_of(fresh.table, h, length, (x,), "void")
    r.inject(h, other.wire)
    for w in r.peers[2].standing():
        r.inject(2, w, to=[3])
    r.run()
    r.advance(1.5 * LIMIT)
    r.act(3, fresh.tick(r.now))
    r.act(3, fresh.join_void(r.now))
    r.run()
    signed = [decode_entry(w) for w in fresh.votes if w != vote and w not in loaded]
    assert not [e for e in signed if e.body.get("action") != "decline"], signed
    named = [ev.error.author for ev in r.events[2]
             if isinstance(ev, Fault) and isinstance(ev.error, Equivocation)]  # fmt: skip
    assert 3 not in named
