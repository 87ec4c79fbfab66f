"""A vote counts for a round only as what it is: one point, motion and `p`, kept in a place of
its own author's, so that no party's voids can stand in for, or push out, another's
(docs/protocol.md 4.5 rule 1, R2; 4.6 "What a peer keeps for it").

Each test here is a hostile party's abuse that broke the one log or named an honest party
before these rules: a last vote signed with another `p` left every honest table half way
through a round for good; a flood of one party's voids pushed the round a cut-off party
needed out of its store, and its log forked for good.
"""

from __future__ import annotations

import pytest
from session_helpers import identities, play_turn, run_until
from walkout_helpers import TIMEOUT_S, router

from buraco_p2p.session import Phase, Router, bodies, decode_entry, make_entry


def _on_turn(n: int, seed: int) -> tuple[Router, int]:
    """Every party present, the first hand under way, the party on turn not yet answered."""
    r = router(n, seed)
    r.manual = set(range(n))
    r.start()
    run_until(r, lambda: bool(r.turns))
    r.run()
    return r, r.turns[-1]


@pytest.mark.parametrize("n", [4, 6])
def test_a_last_vote_signed_on_another_log_completes_no_round_and_its_author_is_retried(
    n: int,
) -> None:
    """The party on turn is silent; the others sign a void naming it, but the last signer
    (hostile) sends its vote with another `p`. No honest peer applies any of the round (once
    begun, a round applies whole); twice the timeout later they retry naming the bad signer
    too, and close on one log."""
    r, turn = _on_turn(n, 3)
    present = [p for p in range(n) if p != turn]
    bad = present[-1]
    honest = present[:-1]
    assert turn != 0, "the retry must leave a majority: pick a seed whose turn is not party 0"

    def resign(sender: int, receiver: int, data: bytes) -> bytes | None:
        e = decode_entry(data)
        if e.author != bad or e.kind != bodies.VOID:
            return data
        return make_entry(identities(n)[bad], table=e.table, index=e.index,
                          prev=bytes([0xBD]) * 32, author=bad, kind=e.kind,
                          body=dict(e.body)).wire  # fmt: skip

    r.tamper = resign
    r.silent = {turn}
    length = len(r.peers[0].log)
    r.advance(2 * TIMEOUT_S)
    for p in present:
        r.act(p, r.peers[p].propose_void("void", r.now, silent=(turn,)))
    r.run()
    for p in honest:
        t = r.peers[p].table
        assert t.voiding is None and len(t.log) == length, (p, t.voiding, len(t.log))
    for _ in range(4):
        r.advance(TIMEOUT_S)
        r.run()
    logs = [r.peers[p].log for p in honest]
    assert all(log == logs[0] for log in logs)
    t = r.peers[honest[0]].table
    assert t.closed and r.peers[honest[0]].table.voiding is None
    last = logs[0][-1]
    assert last.kind == bodies.VOID and set(last.body["silent"]) == {turn, bad}


HOSTILE, CUT = 3, 2


def _cut_off_party_after_a_flood(flood: bool) -> tuple[list[bytes], list[bytes], int]:
    """Four seats; party 3 (hostile) first sends every peer hundreds of voids of its own
    (each a different round, each with its own `p`); then party 2, on turn, is cut off, makes
    its move alone, and the others close naming it. When the partition heals, party 2 is sent
    the log: returns its log, party 0's, and where they part."""
    r = router(4, 7)
    r.manual = {CUT}
    r.start()
    run_until(r, lambda: bool(r.turns))
    r.run()
    length = len(r.peers[0].log)
    assert all(len(p.log) == length for p in r.peers)
    assert r.peers[0].table.phase is Phase.TURN and r.peers[0].table.waiting_for[:1] == (CUT,)
    if flood:
        t = r.peers[HOSTILE].table
        for index in range(length, length + 63):
            for attempt in range(4):
                for k in range(2):
                    body: dict[str, object] = {"action": "end" if attempt else "void",
                                               "silent": [0, 1, 2]}  # fmt: skip
                    if attempt:
                        body[bodies.TRY] = attempt
                    v = make_entry(identities(4)[HOSTILE], table=t.terms.table_id,
                                   index=index, prev=bytes([k, attempt, 7]) * 8 + bytes(8),
                                   author=HOSTILE, kind=bodies.VOID, body=body)  # fmt: skip
                    r.inject(HOSTILE, v.wire)
        r.run()
    r.tamper = lambda s, d, data: None if (s == CUT) != (d == CUT) else data
    play_turn(r, CUT)  # its move: it goes on alone
    r.run()
    assert len(r.peers[CUT].log) == length + 1
    r.advance(2 * TIMEOUT_S)
    for p in (0, 1, 3):
        r.act(p, r.peers[p].propose_void("end", r.now, silent=(CUT,)))
    r.run()
    assert r.peers[0].table.closed and r.peers[0].log[length].kind == bodies.VOID
    r.silent = {HOSTILE}
    r.tamper = None  # the partition heals: party 2 is sent the log
    for e in r.peers[0].log[length:]:
        r.inject(0, e.wire, to=[CUT])
    r.run()
    r.advance(3 * TIMEOUT_S)  # its own round, if any, has waited (R3)
    r.run()
    return [e.wire for e in r.peers[CUT].log], [e.wire for e in r.peers[0].log], length


@pytest.mark.parametrize("flood", [False, True])
def test_one_partys_flood_of_voids_keeps_no_cut_off_party_from_the_one_log(flood: bool) -> None:
    cut, other, _ = _cut_off_party_after_a_flood(flood)
    assert cut == other


A, EQ, C, Y = 0, 1, 2, 3  # A honest (party 0); EQ the equivocator; C honest; Y down a while


@pytest.mark.parametrize("N", [4, 6])
def test_a_given_up_void_at_an_equivocated_point_names_nobody_in_its_dispute(N: int) -> None:
    """An honest party C signed, at the point of an index its author then equivocated at, a
    void naming that author and another late party, and gave it up when their entries came.
    It may sign no other void of that try there (4.5 R1), and the void it holds names other
    parties than the dispute's: it signs the dispute at the next try, "end", and the others'
    retry of the dispute meets it there (4.6 rule 3); nobody names C, present and
    answering."""
    early = [p for p in range(N) if p not in (EQ, C, Y)]  # A and the rest: EQ's entry in time
    r = router(N, 9)
    r.silent = {EQ, Y}  # EQ acts through `inject`; Y is down for a while
    r.start()
    r.run()
    t = r.peers[A].table
    e = len(t.log)
    assert e == 2 and t.expected_author(e) == EQ
    step_prev = t.step_prev
    E1, E2 = (make_entry(identities(N)[EQ], table=t.terms.table_id, index=e, prev=step_prev,
                         author=EQ, kind=bodies.COMMIT, body={"c": bytes([k]) * 32})
              for k in (1, 2))  # fmt: skip
    r.advance(0.9 * TIMEOUT_S)
    held: list[tuple[int, int, bytes]] = []

    def slow(sender: int, receiver: int, data: bytes) -> bytes | None:
        """A's relay of EQ's entry to C is slow (well within the timeout)."""
        if sender != EQ and receiver == C and data == E1.wire:
            held.append((sender, receiver, data))
            return None
        return data

    r.tamper = slow
    r.inject(EQ, E1.wire, to=early)  # EQ's entry reaches them just in time
    r.run()
    assert len(r.peers[A].log) == 4  # A holds EQ's entry and C's: it waits for Y only
    r.advance(0.15 * TIMEOUT_S)  # C's clock: EQ and Y keep the step waiting past the timeout
    r.act(C, r.peers[C].propose_void("void", r.now))  # names the parties it waits for
    r.run()
    r.tamper = None
    r.queue.extend(held)  # EQ's entry reaches C (A's relay): declined, C gives its vote up
    r.run()
    assert len(r.peers[C].log) == 4
    r.inject(EQ, E2.wire, to=[A])  # the equivocation, before Y's entry closes the step
    r.run()
    r.silent = {EQ}  # Y comes back: it is sent what the others hold (as on `sync`)
    for p in (A, C):
        for x in r.peers[p].log[1:] + [x for q in early for x in r.peers[q].log[1:]]:
            r.inject(p, x.wire, to=[Y])
        for w in r.peers[p].votes:
            r.inject(p, w, to=[Y])
    r.inject(A, E2.wire, to=[Y])
    r.run()
    r.act(Y, r.peers[Y].start(r.now))
    r.run()
    for _ in range(6):
        r.advance(TIMEOUT_S)
        r.run()
    named = [x.body["silent"] for x in r.peers[A].log[e:] if x.kind == bodies.VOID]
    assert not any(C in s for s in named), f"honest answering party {C} named: {named}"
