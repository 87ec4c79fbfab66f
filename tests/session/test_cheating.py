"""A cheating or faulty party is caught by every honest peer and named with evidence; the
honest peers release nothing for a bad entry and their logs stay identical."""

from __future__ import annotations

import random

import pytest
from session_helpers import (
    faults,
    forge,
    identities,
    one_log,
    resign,
    run_until,
    same_logs,
    snapshot,
    table,
    table_copy,
)

from buraco_p2p import codec
from buraco_p2p.crypto.shares import make_share_batch
from buraco_p2p.crypto.transcript import ProofContext
from buraco_p2p.engine import (
    AddToMeld,
    Discard,
    DrawStock,
    IllegalMove,
    IllegalMoveCode,
    LayDown,
    Move,
)
from buraco_p2p.session import (
    BadSignature,
    Entry,
    Equivocation,
    LogError,
    MalformedEntry,
    OutOfTurn,
    Phase,
    Refused,
    RejectedEntry,
    Router,
    Voided,
    WrongTable,
    check_equivocation,
    confirm_refusal,
    decode_entry,
)


@pytest.fixture(scope="module")
def first_turn() -> Router:
    """A table dealt and waiting for the first move (every seat's moves made by the test)."""
    r = table("us", seed=7)
    r.manual = {0, 1, 2, 3}
    r.start()
    r.run()
    assert r.turns and all(p.table.phase is Phase.TURN for p in r.peers)
    return r


def _honest(r: Router, cheater: int) -> list[int]:
    return [p for p in range(4) if p != cheater]


def _deliver_to_honest(r: Router, cheater: int, entry: Entry) -> dict[int, list[bytes]]:
    """Hand `entry` to every honest peer directly; return what each then sent."""
    sent = {}
    for p in _honest(r, cheater):
        out = r.peers[p].receive(entry.wire, r.now)
        sent[p] = out.send
        r.events[p] += out.events
    return sent


def _own_shares(r: Router, party: int, slots: list[int], index: int) -> dict[str, object]:
    """Shares the cheater can make for any slot with its own hand key."""
    t = r.peers[party].table
    hand = t.hand
    assert hand is not None and hand.keypair is not None and t.my_seat is not None
    deck = hand.deck
    ctx = ProofContext(t.terms.table_id, hand.number, index, deck.players[t.my_seat])
    batch = make_share_batch(hand.keypair, [deck.deck[s] for s in slots], ctx, t.rng)  # type: ignore[arg-type]
    return {"slots": sorted(slots), "batch": batch.to_bytes()}


def _assert_caught(r: Router, cheater: int, sent: dict[int, list[bytes]], entry: Entry,
                   kind: type = RejectedEntry) -> None:  # fmt: skip
    for p in _honest(r, cheater):
        # nothing of the hand: only its void, dealing again without the cheater (4.6)
        voids = [decode_entry(w) for w in sent[p]]
        assert all(v.kind == "void" and v.body["silent"] == [cheater] for v in voids), \
            f"honest party {p} released something"  # fmt: skip
        errs = [f.error for f in faults(r, p)]
        assert errs, f"party {p} did not complain"
        err = errs[-1]
        assert isinstance(err, kind) and err.author == cheater
        assert entry.wire in err.evidence
    assert same_logs(r, _honest(r, cheater))
    # a third party with the honest log sees the same refusal of the same author
    log = [e.wire for e in r.peers[_honest(r, cheater)[0]].log]
    again = confirm_refusal(log, entry.wire)
    assert type(again) is kind and again.author == cheater


def _move_body(r: Router, party: int, move: Move, slots: list[int]) -> dict[str, object]:
    index = len(r.peers[party].log)
    shares = _own_shares(r, party, slots, index) if slots else None
    return {"m": move.to_wire(), "shares": shares}


def _drawn(first_turn: Router) -> tuple[Router, int]:
    """The player on turn has drawn and must now meld or discard."""
    r = snapshot(first_turn)
    cheater = r.turns[-1]
    seat = r.peers[cheater].table.my_seat
    assert seat is not None
    r.act(cheater, r.peers[cheater].play(DrawStock(seat), r.now))
    r.run()
    assert r.peers[0].table.phase is Phase.TURN
    return r, cheater


@pytest.mark.parametrize("form", ["discard", "lay_down", "add"])
@pytest.mark.parametrize("where", ["other_hand", "pot", "deep_stock", "face_up_pile"])
def test_a_move_showing_slots_the_mover_does_not_hold_gets_no_share(
    first_turn: Router, where: str, form: str
) -> None:
    r, cheater = _drawn(first_turn)
    t = r.peers[cheater].table
    view = t.view
    assert view is not None and t.my_seat is not None
    seat = t.my_seat
    slot = {
        "other_hand": view.hand((seat + 1) % 4)[0] if where == "other_hand" else 0,
        "pot": view.layout.pots[0][3],
        "deep_stock": view.stock[0],
        "face_up_pile": view.pile[-1] if view.pile else view.stock[1],
    }[where]
    own = list(view.hand(seat)[:2])
    move: Move = {
        "discard": Discard(seat, slot),
        "lay_down": LayDown(seat, ((slot, *own),)),
        "add": AddToMeld(seat, 0, (slot,)),
    }[form]
    shown = [slot] if form != "lay_down" else [slot, *own]
    entry = forge(r, cheater, "move", _move_body(r, cheater, move, shown))
    sent = _deliver_to_honest(r, cheater, entry)
    _assert_caught(r, cheater, sent, entry)
    # nobody learned the card: no honest peer's deck holds a public card for that slot
    for p in _honest(r, cheater):
        hand = r.peers[p].table.hand
        assert hand is not None and slot not in hand.deck.public_cards()


def test_a_move_with_a_card_not_held_and_no_shares(first_turn: Router) -> None:
    r, cheater = _drawn(first_turn)
    t = r.peers[cheater].table
    assert t.view is not None and t.my_seat is not None
    other = t.view.hand((t.my_seat + 2) % 4)[0]
    entry = forge(r, cheater, "move", {"m": Discard(t.my_seat, other).to_wire(), "shares": None})
    _assert_caught(r, cheater, _deliver_to_honest(r, cheater, entry), entry)


def test_an_illegal_meld_is_refused_after_its_own_cards_are_shown(first_turn: Router) -> None:
    r, cheater = _drawn(first_turn)
    t = r.peers[cheater].table
    view = t.view
    assert view is not None and t.my_seat is not None
    hand = list(view.hand(t.my_seat))
    bad = None
    for i in range(len(hand) - 2):
        trial = view.copy()
        slots = hand[i : i + 3]
        for s in slots:
            trial.reveal(s, view.card(s), public=True)  # type: ignore[arg-type]
        try:
            trial.push(LayDown(t.my_seat, (tuple(slots),)))
        except IllegalMove as e:
            if e.code is IllegalMoveCode.ILLEGAL_MELD:
                bad = slots
                break
    assert bad is not None
    with pytest.raises(IllegalMove):  # our own peer would never send it
        r.peers[cheater].play(LayDown(t.my_seat, (tuple(bad),)), r.now)
    move = LayDown(t.my_seat, (tuple(bad),))
    entry = forge(r, cheater, "move", _move_body(r, cheater, move, bad))
    _assert_caught(r, cheater, _deliver_to_honest(r, cheater, entry), entry)


def test_a_move_out_of_turn_is_refused_and_the_table_goes_on(first_turn: Router) -> None:
    r = snapshot(first_turn)
    mover = r.turns[-1]
    cheater = (mover + 1) % 4
    seat = r.peers[cheater].table.my_seat
    assert seat is not None
    entry = forge(r, cheater, "move", {"m": DrawStock(seat).to_wire(), "shares": None})
    for p in _honest(r, cheater):
        out = r.peers[p].receive(entry.wire, r.now)
        assert out.send == [] and out.persist == []
        refused = [e.error for e in out.events if isinstance(e, Refused)]
        assert isinstance(refused[0], OutOfTurn) and refused[0].author == cheater
        assert refused[0].evidence == (entry.wire,)
    # the player on turn still plays, and the table goes on
    mseat = r.peers[mover].table.my_seat
    assert mseat is not None
    r.manual = set()
    r.act(mover, r.peers[mover].play(DrawStock(mseat), r.now))
    r.run(200)
    assert all(len(p.log) > len(first_turn.peers[0].log) for p in r.peers)
    shortest = min(len(p.log) for p in r.peers)
    assert len({tuple(e.wire for e in p.log[:shortest]) for p in r.peers}) == 1


def test_forged_and_missing_signatures_are_dropped(first_turn: Router) -> None:
    r = snapshot(first_turn)
    mover = r.turns[-1]
    seat = r.peers[mover].table.my_seat
    assert seat is not None
    good = forge(r, mover, "move", {"m": DrawStock(seat).to_wire(), "shares": None})
    obj = codec.unpack(good.wire)
    obj["s"] = bytes(64)
    forged = codec.pack(obj)
    del obj["s"]
    unsigned = codec.pack(obj)
    for p in _honest(r, mover):
        out = r.peers[p].receive(forged, r.now)
        assert [type(e.error) for e in out.events if isinstance(e, Refused)] == [BadSignature]
        out = r.peers[p].receive(unsigned, r.now)
        assert [type(e.error) for e in out.events if isinstance(e, Refused)] == [MalformedEntry]
        assert out.persist == [] and not faults(r, p)
    # the genuine entry still counts
    for p in _honest(r, mover):
        assert r.peers[p].receive(good.wire, r.now).persist[0].wire == good.wire


def test_an_entry_of_another_table_is_refused(first_turn: Router) -> None:
    r = snapshot(first_turn)
    other = table("us", seed=7)  # same players, same seeds: only the table id differs
    mover = r.turns[-1]
    seat = r.peers[mover].table.my_seat
    assert seat is not None
    entry = forge(r, mover, "move", {"m": DrawStock(seat).to_wire(), "shares": None})
    elsewhere = resign(entry, mover, table=b"another-table-id")
    del other
    for p in _honest(r, mover):
        out = r.peers[p].receive(elsewhere.wire, r.now)
        errs = [e.error for e in out.events if isinstance(e, Refused)]
        assert isinstance(errs[0], WrongTable) and out.persist == []


def _tampered_table(kind: str, cheater: int, change: object, relay: bool = False) -> Router:
    """A fresh table where `cheater`'s first entry of `kind` is replaced (re-signed by it)."""
    done = []

    def tamper(sender: int, receiver: int, data: bytes) -> bytes | None:
        if sender != cheater:
            return data
        e = decode_entry(data)
        if e.kind != kind or (done and done[0] != e.index):
            return data
        done[:] = [e.index]
        return change(e, receiver).wire  # type: ignore[operator]

    r = table("us", seed=8, tamper=tamper, relay=relay)
    return r


def _named_by_every_honest_party(
    r: Router, cheater: int, says: str = "", deliveries: int = 5000
) -> None:
    """Play the tampered table out (up to `deliveries`): every honest party's first fault is
    a refusal of the cheater's entry (its reason containing `says`), and their logs agree."""
    r.start()
    honest = _honest(r, cheater)
    run_until(r, lambda: all(any(isinstance(e, Voided) for e in r.events[p]) for p in honest),
              deliveries)  # fmt: skip
    for p in honest:
        errs = [f.error for f in faults(r, p)]
        assert errs and isinstance(errs[0], RejectedEntry) and errs[0].author == cheater
        assert says in errs[0].reason
        # every present party dealt again at once without the cheater, at the refused entry
        assert Voided("void", (cheater,)) in r.events[p]
        void = next(e for e in r.peers[p].log if e.kind == "void")
        assert void.index == errs[0].index
    assert one_log(r, honest)


def _flip(b: bytes, at: int) -> bytes:
    return b[:at] + bytes([b[at] ^ 1]) + b[at + 1 :]


def test_a_bad_shuffle_proof_is_caught() -> None:
    cheater = 2
    r = _tampered_table(
        "shuffle", cheater,
        lambda e, _: resign(e, cheater, body={**e.body, "proof": _flip(e.body["proof"], 40)}),
    )  # fmt: skip
    _named_by_every_honest_party(r, cheater, "deck")
    assert all(p.table.hand is not None and p.table.hand.view is None for p in r.peers)


@pytest.mark.parametrize("how", ["wrong", "missing"])
def test_a_wrong_or_missing_decryption_share_is_caught(how: str) -> None:
    cheater = 1

    def change(e: Entry, _: int) -> Entry:
        shares = dict(e.body["shares"])
        if how == "wrong":
            shares["batch"] = _flip(shares["batch"], 5)
        else:
            shares["slots"] = shares["slots"][1:]
            shares["batch"] = shares["batch"][32:]
        return resign(e, cheater, body={**e.body, "shares": shares})

    r = _tampered_table("deal", cheater, change)
    _named_by_every_honest_party(r, cheater)
    # the deal never completed: the void dealt again from inside it, before any turn
    assert all(r.peers[p].table.voids[0].phase == "deal" for p in _honest(r, cheater))


@pytest.mark.parametrize("kind", ["reveal", "deal"])
def test_a_nonce_that_does_not_open_its_commitment_is_a_refusal_naming_its_author(
    kind: str,
) -> None:
    """The seat draw's nonce (reveal) and the cut's (deal) are checked against the author's
    commitment; a wrong one is a typed refusal naming that author, not a crash."""
    cheater = 2

    def change(e: Entry, _: int) -> Entry:
        return resign(e, cheater, body={**e.body, "n": _flip(e.body["n"], 0)})

    r = _tampered_table(kind, cheater, change)
    _named_by_every_honest_party(r, cheater, "does not match the commitment")


def test_equivocation_is_caught_with_two_signed_entries() -> None:
    cheater = 3

    def change(e: Entry, receiver: int) -> Entry:
        if receiver != 0:
            return e
        return resign(e, cheater, body={"c": bytes(32)})

    r = _tampered_table("commit", cheater, change, relay=True)
    r.start()
    r.run(5000)
    keys = tuple(i.public for i in identities())
    for p in _honest(r, cheater):
        errs = [f.error for f in faults(r, p) if isinstance(f.error, Equivocation)]
        assert errs, f"party {p} did not see the equivocation"
        assert check_equivocation(r.peers[p].log[0], *errs[0].evidence) == cheater
        a, b = (decode_entry(x) for x in errs[0].evidence)
        a.verify(keys)
        b.verify(keys)
        assert a.author == b.author == cheater and a.index == b.index and a.wire != b.wire


def test_a_wrong_score_is_caught() -> None:
    cheater = 0

    def change(e: Entry, _: int) -> Entry:
        totals = list(e.body["totals"])
        totals[0] += 100
        return resign(e, cheater, body={**e.body, "totals": totals})

    r = _tampered_table("result", cheater, change)
    _named_by_every_honest_party(r, cheater, "score", deliveries=1_000_000)


def test_hostile_moves_raise_only_typed_refusals(first_turn: Router) -> None:
    """Random move bodies from the player on turn, after its draw: every one is applied or
    refused with a `LogError` naming that player, never another exception."""
    r, cheater = _drawn(first_turn)
    honest = _honest(r, cheater)[0]
    base = r.peers[honest].table
    t = r.peers[cheater].table
    assert t.my_seat is not None and t.view is not None
    rng = random.Random(5)
    held = list(t.view.hand(t.my_seat))
    outcomes = {"accepted": 0, "refused": 0}
    for _ in range(60):
        kind = rng.randrange(7)
        seat = rng.choice([t.my_seat, t.my_seat, (t.my_seat + 1) % 4])
        pool = held + [rng.randrange(108) for _ in range(3)]
        slots = rng.sample(pool, rng.randrange(0, 4))
        wire: list[object] = [kind, seat]
        if kind == 3:
            wire += [1, len(slots), 0, *slots]
        elif kind == 4:
            wire += [rng.randrange(3), 0, *slots]
        elif kind in (1, 5, 6):
            wire += slots[:1]
        shares = sorted(set(s for s in slots if 0 <= s < 108))
        body = {
            "m": wire,
            "shares": _own_shares(r, cheater, shares, len(t.log))
            if shares and rng.random() < 0.8
            else None,
        }
        entry = forge(r, cheater, "move", body)
        trial = table_copy(base)
        try:
            trial.apply(entry)
            outcomes["accepted"] += 1
        except LogError as exc:
            assert exc.author == cheater and exc.evidence == (entry.wire,)
            outcomes["refused"] += 1
    assert outcomes["refused"] > 30


def test_garbage_bytes_never_raise_from_receive(first_turn: Router) -> None:
    """Random bytes, truncated and bit-flipped entries handed to a peer: refused with an
    event, never an exception, and the log is untouched."""
    r = snapshot(first_turn)
    peer = r.peers[0]
    before = [e.wire for e in peer.log]
    rng = random.Random(9)
    samples = before[1:]
    for _ in range(300):
        base = rng.choice(samples)
        how = rng.randrange(4)
        if how == 0:
            data = rng.randbytes(rng.randrange(0, 200))
        elif how == 1:
            data = base[: rng.randrange(len(base))]
        elif how == 2:
            at = rng.randrange(len(base))
            data = base[:at] + bytes([base[at] ^ (1 << rng.randrange(8))]) + base[at + 1 :]
        else:
            data = base + rng.randbytes(3)
        out = peer.receive(data, r.now)
        assert out.persist == [] and out.send == []
    assert [e.wire for e in peer.log] == before
    assert not faults(r, 0)
