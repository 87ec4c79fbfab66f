"""The deck of one hand as a sans-IO protocol: keys, four verified shuffles, deal and reveals.

One `DeckSession` per peer per hand. It never touches sockets or clocks: the table session feeds
it every deck message of the log, in log order, with its log index and the seat that signed the
entry (its own messages too), and asks it for the messages this peer owes. Everything received
is verified before it changes any state, and a message that fails raises a `DeckError` subclass
naming the seat that sent it; the session's state is then exactly what it was before.

The flow (docs/protocol.md section 1.8):

1. Keys. Every seat publishes `KeyMessage`: its per-hand public key Y_i and a Schnorr proof.
   When all are in, the table key is Y = sum Y_i.
2. Shuffles. In seat order, each seat publishes `ShuffleMessage`: the previous deck (the open
   deck for seat 0) re-randomised and permuted, with a proof of shuffle. It counts only once it
   verifies; every other peer checks it.
3. Deal. The deck is then ready: the slots of each seat's hand (from the deal layout) are
   requested for private reveal to that seat. Every seat publishes one `SharesMessage` with its
   decryption shares (one batch Chaum-Pedersen proof) for every slot of the other seats' hands.
   Each owner adds its own share locally and learns its 11 cards; nobody else learns them.
4. Later reveals are requested by the table session as the game needs them: `request_private`
   (a stock draw, taking a pot: the others publish shares) and `request_public` (a meld, a
   discard, the count at the end of the hand: everybody, owner included, publishes).

Seats are the indices of `players`, which is also the shuffle order.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from itertools import pairwise
from typing import Final, Protocol

from buraco_p2p.crypto.elgamal import Ciphertext, deck_bytes, decode_deck, open_deck
from buraco_p2p.crypto.encoding import card_points
from buraco_p2p.crypto.errors import CryptoError, NotACard, ProofError
from buraco_p2p.crypto.group import IDENTITY, Point, RandomSource
from buraco_p2p.crypto.keys import KeyAnnouncement, KeyPair
from buraco_p2p.crypto.shares import (
    ShareBatch,
    make_share_batch,
    open_card,
    own_share,
    verify_share_batch,
)
from buraco_p2p.crypto.shuffle import decode_and_verify, proof_size, shuffle_and_prove
from buraco_p2p.crypto.transcript import ProofContext

__all__ = [
    "CardRevealed",
    "CardSeen",
    "DeckError",
    "DeckEvent",
    "DeckMessage",
    "DeckPhase",
    "DeckReady",
    "DeckSession",
    "KeyAccepted",
    "KeyMessage",
    "KeyRejected",
    "LayoutLike",
    "MalformedMessage",
    "OutOfTurn",
    "ShareRejected",
    "SharesAccepted",
    "SharesMessage",
    "ShuffleAccepted",
    "ShuffleMessage",
    "ShuffleRejected",
    "decode_message",
    "hands_by_seat",
]

PLAYERS: Final = 4
_KEY_BYTES: Final = 96


# ---------------------------------------------------------------------------------------------
# Errors


class DeckError(CryptoError):
    """A deck message that cannot be accepted. `party` is the seat that sent it."""

    def __init__(self, party: int | None, reason: str) -> None:
        self.party = party
        self.reason = reason
        who = f"seat {party}: " if party is not None else ""
        super().__init__(who + reason)


class MalformedMessage(DeckError):
    """Not a deck message at all: wrong type, missing or ill-typed fields, bad lengths."""


class OutOfTurn(DeckError):
    """A well-formed message that the protocol does not expect now, or not from this seat."""


class KeyRejected(DeckError):
    """A key announcement whose key or Schnorr proof does not check."""


class ShuffleRejected(DeckError):
    """A shuffle whose output deck or proof does not check; `field` names the failing part."""

    def __init__(self, party: int, reason: str, field: str | None = None) -> None:
        self.field = field
        super().__init__(party, reason + (f" (field {field})" if field else ""))


class ShareRejected(DeckError):
    """Decryption shares whose proof does not check, for the listed `slots`."""

    def __init__(self, party: int, reason: str, slots: Sequence[int] = ()) -> None:
        self.slots = tuple(slots)
        super().__init__(party, reason)


# ---------------------------------------------------------------------------------------------
# Messages


def _wire_int(obj: Mapping[str, object], key: str, lo: int, hi: int) -> int:
    v = obj.get(key)
    if isinstance(v, bool) or not isinstance(v, int) or not lo <= v < hi:
        raise MalformedMessage(None, f"field {key!r} must be an integer in [{lo}, {hi})")
    return v


def _wire_bytes(obj: Mapping[str, object], key: str) -> bytes:
    v = obj.get(key)
    if not isinstance(v, bytes):
        raise MalformedMessage(None, f"field {key!r} must be bytes")
    return v


@dataclass(frozen=True, slots=True)
class KeyMessage:
    """A seat's per-hand key: Y_i (32 bytes) || Schnorr proof (64 bytes)."""

    TYPE = "deck/key"
    seat: int
    key: bytes

    def to_wire(self) -> dict[str, object]:
        return {"type": self.TYPE, "seat": self.seat, "key": self.key}


@dataclass(frozen=True, slots=True)
class ShuffleMessage:
    """A seat's shuffle: the output deck (64 bytes per card) and the proof of shuffle."""

    TYPE = "deck/shuffle"
    seat: int
    deck: bytes
    proof: bytes

    def to_wire(self) -> dict[str, object]:
        return {"type": self.TYPE, "seat": self.seat, "deck": self.deck, "proof": self.proof}


@dataclass(frozen=True, slots=True)
class SharesMessage:
    """A seat's decryption shares for `slots` (ascending), as one batch: the shares in slot
    order (32 bytes each) and one Chaum-Pedersen batch proof (64 bytes)."""

    TYPE = "deck/shares"
    seat: int
    slots: tuple[int, ...]
    batch: bytes

    def to_wire(self) -> dict[str, object]:
        return {
            "type": self.TYPE,
            "seat": self.seat,
            "slots": list(self.slots),
            "batch": self.batch,
        }


DeckMessage = KeyMessage | ShuffleMessage | SharesMessage

_MAX_DECK: Final = 108


def decode_message(obj: object) -> DeckMessage:
    """Validate a decoded wire object (e.g. from msgpack) and build the message.

    Checks structure, types and sizes only; whether the message is acceptable (its turn, its
    proofs) is for `DeckSession.receive`.
    """
    if not isinstance(obj, Mapping) or not all(isinstance(k, str) for k in obj):
        raise MalformedMessage(None, "a deck message is a map with text keys")
    kind = obj.get("type")
    seat = _wire_int(obj, "seat", 0, PLAYERS)
    try:
        if kind == KeyMessage.TYPE:
            _only(obj, {"type", "seat", "key"})
            key = _wire_bytes(obj, "key")
            if len(key) != _KEY_BYTES:
                raise MalformedMessage(None, f"a key is {_KEY_BYTES} bytes, got {len(key)}")
            return KeyMessage(seat, key)
        if kind == ShuffleMessage.TYPE:
            _only(obj, {"type", "seat", "deck", "proof"})
            deck = _wire_bytes(obj, "deck")
            proof = _wire_bytes(obj, "proof")
            if len(deck) % 64 or not 0 < len(deck) // 64 <= _MAX_DECK:
                raise MalformedMessage(None, f"a deck of {len(deck)} bytes is not 1..108 cards")
            if len(proof) != proof_size(len(deck) // 64):
                raise MalformedMessage(None, "proof length does not match the deck")
            return ShuffleMessage(seat, deck, proof)
        if kind == SharesMessage.TYPE:
            _only(obj, {"type", "seat", "slots", "batch"})
            raw = obj.get("slots")
            if not isinstance(raw, list | tuple) or not raw or len(raw) > _MAX_DECK:
                raise MalformedMessage(None, "field 'slots' must be a list of 1..108 slots")
            slots = []
            for s in raw:
                if isinstance(s, bool) or not isinstance(s, int) or not 0 <= s < _MAX_DECK:
                    raise MalformedMessage(None, "a slot is an integer in [0, 108)")
                slots.append(s)
            if any(a >= b for a, b in pairwise(slots)):
                raise MalformedMessage(None, "slots must be strictly ascending")
            batch = _wire_bytes(obj, "batch")
            if len(batch) != 32 * len(slots) + 64:
                raise MalformedMessage(None, "batch length does not match the slots")
            return SharesMessage(seat, tuple(slots), batch)
    except MalformedMessage as e:
        raise MalformedMessage(seat, e.reason) from None
    raise MalformedMessage(seat, f"unknown deck message type {kind!r}")


def _only(obj: Mapping[str, object], keys: set[str]) -> None:
    extra = set(obj) - keys
    if extra:
        raise MalformedMessage(None, f"unexpected fields {sorted(extra)}")


# ---------------------------------------------------------------------------------------------
# Events


@dataclass(frozen=True, slots=True)
class KeyAccepted:
    seat: int


@dataclass(frozen=True, slots=True)
class ShuffleAccepted:
    seat: int


@dataclass(frozen=True, slots=True)
class DeckReady:
    """All shuffles verified; the table key and the final deck are fixed."""

    table_key: Point


@dataclass(frozen=True, slots=True)
class SharesAccepted:
    seat: int
    slots: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class CardSeen:
    """A card this peer alone has learned (its own slot, privately revealed)."""

    slot: int
    card: int


@dataclass(frozen=True, slots=True)
class CardRevealed:
    """A card every peer has learned (a public reveal)."""

    slot: int
    card: int


DeckEvent = KeyAccepted | ShuffleAccepted | DeckReady | SharesAccepted | CardSeen | CardRevealed


# ---------------------------------------------------------------------------------------------
# The session


class DeckPhase(Enum):
    KEYS = "keys"
    SHUFFLING = "shuffling"
    READY = "ready"


class LayoutLike(Protocol):
    """What the deck needs of a deal layout (e.g. `buraco_p2p.engine.layout.DealLayout`):
    the deck size and the slots of each hand, in play order."""

    @property
    def deck_size(self) -> int: ...

    @property
    def hands(self) -> Sequence[Sequence[int]]: ...


def hands_by_seat(layout: LayoutLike, play_order: Sequence[int]) -> tuple[tuple[int, ...], ...]:
    """Hand slots indexed by seat, given the seat of each position of the play order."""
    if sorted(play_order) != list(range(PLAYERS)) or len(layout.hands) != PLAYERS:
        raise ValueError("play order must be a permutation of the four seats")
    out: list[tuple[int, ...]] = [()] * PLAYERS
    for pos, seat in enumerate(play_order):
        out[seat] = tuple(layout.hands[pos])
    return tuple(out)


@dataclass(slots=True)
class _Slot:
    owner: int | None = None
    public: bool = False
    requested: bool = False
    shares: dict[int, Point] = field(default_factory=dict)
    card: int | None = None  # known to this peer (own private card, or public)
    revealed: bool = False  # opened publicly


class DeckSession:
    """The deck protocol of one hand, seen from one seat (`me`), or from a pure verifier
    (`me=None`, no key pair) such as an offline log checker."""

    def __init__(
        self,
        *,
        table_id: bytes,
        hand: int,
        players: Sequence[bytes],
        me: int | None,
        keypair: KeyPair | None,
        layout: LayoutLike,
        play_order: Sequence[int] = (0, 1, 2, 3),
        rng: RandomSource | None = None,
    ) -> None:
        if len(players) != PLAYERS or len(set(players)) != PLAYERS:
            raise ValueError("a deck session needs four distinct player ids")
        if me is not None and not 0 <= me < PLAYERS:
            raise ValueError(f"seat must be 0..3, not {me}")
        if (me is None) != (keypair is None) or (me is not None and rng is None):
            raise ValueError("a seat needs its key pair and a random source; a verifier neither")
        self.table_id = table_id
        self.hand = hand
        self.players = tuple(players)
        self.me = me
        self._keypair = keypair
        self._rng = rng
        self.deck_size = layout.deck_size
        self._hands = hands_by_seat(layout, play_order)
        dealt = [s for h in self._hands for s in h]
        if len(set(dealt)) != len(dealt) or not all(0 <= s < self.deck_size for s in dealt):
            raise ValueError("hand slots must be distinct slots of the deck")

        self.phase = DeckPhase.KEYS
        self._keys: dict[int, Point] = {}
        self.table_key: Point | None = None
        self._deck: tuple[Ciphertext, ...] = open_deck(card_points(self.deck_size))
        self._shuffled = 0
        self._slots = [_Slot() for _ in range(self.deck_size)]
        # Messages this peer made, with the log index their proofs are bound to: replaying
        # them needs no verification, anything else (a copy at another index) is verified.
        self._sent: set[tuple[DeckMessage, int]] = set()

    # -- helpers --------------------------------------------------------------------------

    def _ctx(self, seat: int, log_index: int) -> ProofContext:
        return ProofContext(self.table_id, self.hand, log_index, self.players[seat])

    def _mine(self) -> tuple[int, KeyPair, RandomSource]:
        if self.me is None or self._keypair is None or self._rng is None:
            raise RuntimeError("a verifier-only session sends nothing")
        return self.me, self._keypair, self._rng

    @property
    def deck(self) -> tuple[Ciphertext, ...]:
        """The current deck: the open deck, then each verified shuffle's output."""
        return self._deck

    @property
    def next_shuffler(self) -> int | None:
        return self._shuffled if self.phase is DeckPhase.SHUFFLING else None

    def hand_slots(self, seat: int) -> tuple[int, ...]:
        return self._hands[seat]

    def owner(self, slot: int) -> int | None:
        return self._slots[slot].owner

    def card(self, slot: int) -> int | None:
        """The card in `slot` if this peer knows it (its own private card, or a public one)."""
        return self._slots[slot].card

    def known_cards(self) -> dict[int, int]:
        """slot -> card for every slot this peer can see."""
        return {i: s.card for i, s in enumerate(self._slots) if s.card is not None}

    def public_cards(self) -> dict[int, int]:
        return {i: s.card for i, s in enumerate(self._slots) if s.revealed and s.card is not None}

    # -- producing messages ---------------------------------------------------------------

    def key_message(self, log_index: int) -> KeyMessage:
        """This seat's key announcement, to be logged at `log_index`."""
        me, kp, rng = self._mine()
        if self.phase is not DeckPhase.KEYS or me in self._keys:
            raise RuntimeError("not expecting our key now")
        ann = KeyAnnouncement.create(kp, self._ctx(me, log_index), rng)
        msg = KeyMessage(me, ann.to_bytes())
        self._sent.add((msg, log_index))
        return msg

    def shuffle_message(self, log_index: int) -> ShuffleMessage:
        """Our shuffle of the current deck, to be logged at `log_index` (our turn only)."""
        me, _, rng = self._mine()
        if self.next_shuffler != me or self.table_key is None:
            raise RuntimeError("it is not our turn to shuffle")
        out, proof = shuffle_and_prove(self._ctx(me, log_index), self.table_key, self._deck, rng)
        msg = ShuffleMessage(me, deck_bytes(out), proof.to_bytes())
        self._sent.add((msg, log_index))
        return msg

    def owed_slots(self) -> tuple[int, ...]:
        """Slots for which this seat must still publish a share."""
        if self.me is None:
            return ()
        return tuple(
            i
            for i, s in enumerate(self._slots)
            if s.requested and self.me not in s.shares and (s.public or s.owner != self.me)
        )

    def owed_by(self, seat: int) -> tuple[int, ...]:
        return tuple(
            i
            for i, s in enumerate(self._slots)
            if s.requested and seat not in s.shares and (s.public or s.owner != seat)
        )

    def shares_message(self, log_index: int, slots: Iterable[int] | None = None) -> SharesMessage:
        """Our shares for `slots` (default: every slot we owe), to be logged at `log_index`."""
        me, kp, rng = self._mine()
        owed = set(self.owed_slots())
        chosen = tuple(sorted(owed if slots is None else set(slots)))
        if not chosen:
            raise RuntimeError("no shares are owed")
        if not set(chosen) <= owed:
            raise RuntimeError(f"we owe no share for slots {sorted(set(chosen) - owed)}")
        batch = make_share_batch(kp, [self._deck[s] for s in chosen], self._ctx(me, log_index), rng)
        msg = SharesMessage(me, chosen, batch.to_bytes())
        self._sent.add((msg, log_index))
        return msg

    # -- requests from the table session --------------------------------------------------

    def request_private(self, slots: Iterable[int], owner: int) -> None:
        """Reveal `slots` to `owner` only: the other three seats owe their shares."""
        self._request(slots, owner, public=False)

    def request_public(self, slots: Iterable[int], owner: int | None = None) -> None:
        """Reveal `slots` to everyone: every seat, the owner included, owes its share."""
        self._request(slots, owner, public=True)

    def _request(self, slots: Iterable[int], owner: int | None, *, public: bool) -> None:
        if self.phase is not DeckPhase.READY:
            raise RuntimeError("the deck is not ready")
        if owner is not None and not 0 <= owner < PLAYERS:
            raise ValueError(f"owner must be a seat 0..3, not {owner}")
        chosen = list(slots)
        for s in chosen:
            if not 0 <= s < self.deck_size:
                raise ValueError(f"no slot {s} in a deck of {self.deck_size}")
            st = self._slots[s]
            if st.requested and st.owner is not None and owner is not None and st.owner != owner:
                raise ValueError(f"slot {s} already belongs to seat {st.owner}")
            if not public and owner is None:
                raise ValueError("a private reveal needs an owner")
        for s in chosen:
            st = self._slots[s]
            st.requested = True
            if owner is not None:
                st.owner = owner
            st.public = st.public or public

    # -- receiving --------------------------------------------------------------------------

    def receive(self, msg: DeckMessage, log_index: int, *, sender: int) -> list[DeckEvent]:
        """Apply one logged deck message (ours included). Raises DeckError naming the sender,
        leaving the session unchanged, if it is out of turn or does not verify.

        `sender` is the seat whose signature the log entry carries, never read from the message:
        a key proof or a shuffle proof needs no secret of the seat it claims (anyone can prove a
        fresh key or a shuffle under another seat's id), so only the signer makes it that seat's.
        A message whose `seat` is not its signer's is OutOfTurn, naming the signer.
        """
        if isinstance(sender, bool) or not isinstance(sender, int) or not 0 <= sender < PLAYERS:
            raise ValueError(f"sender must be a seat 0..3, not {sender!r}")
        if not isinstance(msg, KeyMessage | ShuffleMessage | SharesMessage):
            raise MalformedMessage(sender, f"not a deck message: {type(msg).__name__}")
        if msg.seat != sender:
            raise OutOfTurn(sender, f"a message signed by seat {sender} claims seat {msg.seat}")
        if isinstance(msg, KeyMessage):
            return self._receive_key(msg, log_index)
        if isinstance(msg, ShuffleMessage):
            return self._receive_shuffle(msg, log_index)
        return self._receive_shares(msg, log_index)

    def _receive_key(self, msg: KeyMessage, log_index: int) -> list[DeckEvent]:
        seat = msg.seat
        if self.phase is not DeckPhase.KEYS:
            raise OutOfTurn(seat, "keys are no longer expected")
        if seat in self._keys:
            raise OutOfTurn(seat, "this seat has already announced its key")
        try:
            ann = KeyAnnouncement.from_bytes(self._ctx(seat, log_index), msg.key)
            if (msg, log_index) not in self._sent:
                ann.verify()
        except ProofError as e:
            raise KeyRejected(seat, e.reason) from e
        if ann.public in self._keys.values():
            raise KeyRejected(seat, "key already announced by another seat")
        events: list[DeckEvent] = [KeyAccepted(seat)]
        self._keys[seat] = ann.public
        if len(self._keys) == PLAYERS:
            total = IDENTITY
            for s in range(PLAYERS):
                total = total + self._keys[s]
            if total.is_identity():
                del self._keys[seat]
                raise KeyRejected(seat, "the keys sum to the identity")
            self.table_key = total
            self.phase = DeckPhase.SHUFFLING
        return events

    def _receive_shuffle(self, msg: ShuffleMessage, log_index: int) -> list[DeckEvent]:
        seat = msg.seat
        if self.phase is not DeckPhase.SHUFFLING or self.table_key is None:
            raise OutOfTurn(seat, "no shuffle is expected now")
        if seat != self._shuffled:
            raise OutOfTurn(seat, f"it is seat {self._shuffled}'s turn to shuffle")
        ctx = self._ctx(seat, log_index)
        try:
            if (msg, log_index) in self._sent:
                new = decode_deck(msg.deck, len(self._deck))  # our own, already proven
            else:
                new = decode_and_verify(ctx, self.table_key, self._deck, msg.deck, msg.proof)
        except ProofError as e:
            raise ShuffleRejected(seat, e.reason, e.field) from e
        self._deck = new
        self._shuffled += 1
        events: list[DeckEvent] = [ShuffleAccepted(seat)]
        if self._shuffled == PLAYERS:
            self.phase = DeckPhase.READY
            events.append(DeckReady(self.table_key))
            for owner, slots in enumerate(self._hands):
                self._request(slots, owner, public=False)
        return events

    def _receive_shares(self, msg: SharesMessage, log_index: int) -> list[DeckEvent]:
        seat = msg.seat
        if self.phase is not DeckPhase.READY:
            raise OutOfTurn(seat, "the deck is not ready for reveals")
        owed = set(self.owed_by(seat))
        extra = [s for s in msg.slots if s not in owed]
        if extra:
            raise OutOfTurn(seat, f"no share is owed for slots {extra}")
        cts = [self._deck[s] for s in msg.slots]
        try:
            batch = ShareBatch.from_bytes(msg.batch, len(msg.slots), party=seat)
            if (msg, log_index) not in self._sent:
                verify_share_batch(self._keys[seat], cts, batch, self._ctx(seat, log_index))
        except ProofError as e:
            raise ShareRejected(seat, e.reason, msg.slots) from e
        # Open what can be opened before committing anything, so a bad card leaves no trace.
        opened: list[tuple[int, int, bool]] = []
        for slot, d in zip(msg.slots, batch.shares, strict=True):
            st = self._slots[slot]
            shares = {**st.shares, seat: d}
            outcome = self._try_open(slot, st, shares, seat)
            if outcome is not None:
                opened.append(outcome)
        events: list[DeckEvent] = [SharesAccepted(seat, msg.slots)]
        for slot, d in zip(msg.slots, batch.shares, strict=True):
            self._slots[slot].shares[seat] = d
        for slot, card, public in opened:
            st = self._slots[slot]
            st.card = card
            if public:
                st.revealed = True
                events.append(CardRevealed(slot, card))
            else:
                events.append(CardSeen(slot, card))
        return events

    def _try_open(
        self, slot: int, st: _Slot, shares: dict[int, Point], sender: int
    ) -> tuple[int, int, bool] | None:
        ct = self._deck[slot]
        try:
            if st.public and len(shares) == PLAYERS and not st.revealed:
                card = open_card(ct, [shares[s] for s in range(PLAYERS)], self.deck_size)
                return slot, card, True
            if (
                not st.public
                and st.card is None
                and self.me is not None
                and self._keypair is not None
                and st.owner == self.me
                and len(shares) == PLAYERS - 1
            ):
                others = [shares[s] for s in range(PLAYERS) if s != self.me]
                mine = own_share(self._keypair, ct)
                return slot, open_card(ct, [*others, mine], self.deck_size), False
        except NotACard as e:
            # Every share and every shuffle here verified, so this cannot happen with honest
            # or cheating peers alike short of a broken proof; name the last sender.
            raise ShareRejected(sender, f"slot {slot} does not open to a card: {e}", [slot]) from e
        return None
