"""What this party owes the log: the bodies of its own entries, made from the table's state.

Called by `Table.produce` / `Table.move_body` right after the step they belong to has begun
(every check of the entries before it done): validate before reveal holds by construction,
as a share is only ever made for a request the table has already accepted. The one entry
made earlier is a shuffle (`shuffle_after`), which reveals nothing: a peer may build it on
the previous shuffle while that one waits to be verified.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from buraco_p2p.crypto.deck import SharesMessage, ShuffleMessage
from buraco_p2p.crypto.elgamal import deck_bytes, decode_deck
from buraco_p2p.crypto.errors import CryptoError
from buraco_p2p.crypto.randomness import CoinContext, commitment
from buraco_p2p.crypto.shares import make_share_batch
from buraco_p2p.crypto.shuffle import shuffle_and_prove
from buraco_p2p.crypto.transcript import ProofContext
from buraco_p2p.engine import Move
from buraco_p2p.session import bodies
from buraco_p2p.session.bodies import Shares
from buraco_p2p.session.states import Phase

if TYPE_CHECKING:
    from buraco_p2p.session.entry import Entry
    from buraco_p2p.session.tablestate import TableState

__all__ = [
    "CUT",
    "SEATS",
    "produce_entry",
    "produce_move",
    "produce_shuffle_on",
    "produce_time",
    "shuffle_after",
]

SEATS = b"seats"
CUT = b"cut"


def produce_entry(t: TableState) -> tuple[int, str, dict[str, Any]] | None:
    """The entry this party owes in the current step, if any but a move: (index, kind,
    body). Call once per step; a move comes from `move_body`."""
    me = t.me
    if me is None or t.fault is not None or t.voiding is not None:
        return None
    index = t.index_of(me)
    if index is None:
        return None
    phase = t.phase
    ctx_seats = CoinContext(t.terms.table_id, SEATS, 0)
    if phase is Phase.SEATS_COMMIT:
        assert t.seat_nonce is not None
        return index, bodies.COMMIT, {"c": commitment(ctx_seats, me, t.seat_nonce)}
    if phase is Phase.SEATS_REVEAL:
        return index, bodies.REVEAL, {"n": t.seat_nonce}
    hand = t.hand
    assert hand is not None
    deck = hand.deck
    if phase is Phase.HAND_KEYS:
        assert hand.cut_nonce is not None
        key = deck.key_message(index).key
        ctx = CoinContext(t.terms.table_id, CUT, hand.number)
        return index, bodies.KEYS, {"key": key, "c": commitment(ctx, me, hand.cut_nonce)}
    if phase is Phase.SHUFFLE:
        msg = deck.shuffle_message(index)
        return index, bodies.SHUFFLE, {"deck": msg.deck, "proof": msg.proof}
    if phase is Phase.DEAL:
        msg2 = deck.shares_message(index)
        return index, bodies.DEAL, {
            "shares": Shares(msg2.slots, msg2.batch).to_wire(), "n": hand.cut_nonce,
        }  # fmt: skip
    if phase in (Phase.REVEAL, Phase.COUNT):
        kind = bodies.SHARES if phase is Phase.REVEAL else bodies.END
        if not deck.owed_slots():
            return index, kind, {"shares": None}
        msg3 = deck.shares_message(index)
        return index, kind, {"shares": Shares(msg3.slots, msg3.batch).to_wire()}
    if phase is Phase.RESULT:
        assert hand.result is not None and hand.view is not None
        return index, bodies.RESULT, {
            "totals": list(hand.result.totals), "state": hand.view.state_hash(),
        }  # fmt: skip
    if phase is Phase.OPEN:
        assert hand.keypair is not None
        return index, bodies.OPEN, {"secret": hand.keypair.secret.to_bytes()}
    if phase is Phase.FINAL:
        assert t.match is not None
        return index, bodies.FINAL, {"scores": list(t.match.scores)}
    return None


def produce_time(t: TableState, clock_ms: int) -> tuple[int, str, dict[str, Any]] | None:
    """Our entry of a round of clocks: `clock_ms`, the host's clock reading (milliseconds
    since this peer saw the seats drawn), which the session itself never reads."""
    me = t.me
    if me is None or t.fault is not None or t.voiding is not None or t.phase is not Phase.TIME:
        return None
    index = t.index_of(me)
    if index is None:
        return None
    return index, bodies.TIME, {"ms": max(0, min(clock_ms, bodies.MAX_CLOCK_MS))}


def produce_move(t: TableState, move: Move) -> tuple[int, dict[str, Any]]:
    """The body of our own move, checked first exactly as a peer's move is checked, then
    in a copy of our view with the shown cards made public (raises `IllegalMove`), so an
    illegal intent changes nothing and is never sent."""
    me, seat, hand = t.me, t.my_seat, t.hand
    if me is None or seat is None or hand is None or hand.view is None:
        raise RuntimeError("no move of ours is expected")
    index = t.index_of(me)
    if index is None or t.phase is not Phase.TURN:
        raise RuntimeError("it is not our turn to move")
    shown = t.check_move(seat, move)  # a refusal is turned into IllegalMove by the caller
    trial = hand.view.copy()
    for s in shown:
        card = trial.card(s)
        if card is None:
            raise RuntimeError(f"our own slot {s} is unknown to us")
        trial.reveal(s, card, public=True)
    trial.push(move)
    shares = None
    if shown:
        assert hand.keypair is not None and t.rng is not None
        deck = hand.deck
        ctx = ProofContext(t.terms.table_id, hand.number, index, deck.players[seat])
        batch = make_share_batch(hand.keypair, [deck.deck[s] for s in shown], ctx, t.rng)
        msg = SharesMessage(seat, shown, batch.to_bytes())
        # Our own proof: the deck skips verifying what it knows we made at this index.
        deck.remember_own(msg, index)
        shares = Shares(shown, msg.batch).to_wire()
    return index, {"m": move.to_wire(), "shares": shares}


def shuffle_after(t: TableState, entry: Entry) -> int | None:
    """The index of our shuffle if it builds on `entry`, another party's shuffle that is due
    now and not yet verified: a peer may then make and send its own first (shuffling reveals
    nothing), and the verification of `entry` still gates everything that follows."""
    hand, seat = t.hand, t.my_seat
    if hand is None or seat is None or entry.author == t.me:
        return None
    deck = hand.deck
    if deck.next_shuffler is None or deck.next_shuffler + 1 != seat:
        return None
    if t.expected_author(entry.index) != entry.author or deck.table_key is None:
        return None
    return entry.index + 1


def produce_shuffle_on(t: TableState, entry: Entry, index: int) -> dict[str, Any] | None:
    """The body of our shuffle at `index` of the deck `entry` (see `shuffle_after`) carries,
    or None for a deck that does not even decode: its verification will name its author."""
    hand, seat = t.hand, t.my_seat
    assert hand is not None and seat is not None and t.rng is not None
    deck = hand.deck
    assert deck.table_key is not None
    try:
        prev_deck = decode_deck(entry.body["deck"], deck.deck_size)
    except (CryptoError, KeyError, TypeError, ValueError):
        return None
    ctx = ProofContext(t.terms.table_id, hand.number, index, deck.players[seat])
    out_deck, proof = shuffle_and_prove(ctx, deck.table_key, prev_deck, t.rng)
    msg = ShuffleMessage(seat, deck_bytes(out_deck), proof.to_bytes())
    deck.remember_own(msg, index)  # ours: the deck need not verify it again
    return {"deck": msg.deck, "proof": msg.proof}
