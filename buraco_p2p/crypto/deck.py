"""The deck of one hand as a sans-IO protocol: keys, N verified shuffles, deal and reveals.

One `DeckSession` per peer per hand, at a table of N = 2..6 seats and a deck of 104, 108, 156 or
162 cards. It never touches sockets or clocks: the table session feeds it every deck message of
the log, in log order, with its log index and the seat that signed the entry (its own messages
too), and asks it for the messages this peer owes. Everything received is verified before it
changes any state, and a message that fails raises a `DeckError` subclass naming the seat that
sent it; the session's state is then exactly what it was before. A reveal request that would
open a card to a seat with no claim to it is refused the same way (`RevealRefused`).

The flow (docs/protocol.md section 1.8):

1. Keys. Every seat publishes `KeyMessage`: its per-hand public key Y_i and a Schnorr proof.
   When all N are in, the table key is Y = sum Y_i.
2. Shuffles. In seat order, each seat publishes `ShuffleMessage`: the previous deck (the open
   deck for seat 0) re-randomised and permuted, with a proof of shuffle. It counts only once it
   verifies; every other peer checks it. After the N-th, the deck is fixed.
3. Deal. The slots of each seat's hand (from the deal layout and the play order) are requested
   for private reveal to that seat. Every seat publishes one `SharesMessage` with its
   decryption shares (one batch Chaum-Pedersen proof) for every slot of the N-1 other hands.
   Each owner adds its own share locally and learns its cards; nobody else learns them.
4. Later reveals are requested by the table session as the game needs them: `request_private`
   (a stock draw, taking a pot: the N-1 others publish shares) and `request_public` (a meld, a
   discard, the count at the end of the hand: all N, owner included, publish). A request is
   checked against who holds each slot before anything is owed for it.
5. Opening. A slot opens for its owner alone once the N-1 others' shares are in, and for
   everyone once all N are.

Seats are the indices of `players`, which is also the shuffle order.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Protocol

from buraco_p2p.crypto.deck_wire import (
    MAX_SEATS,
    MIN_SEATS,
    DeckError,
    DeckMessage,
    KeyMessage,
    KeyRejected,
    MalformedMessage,
    OutOfTurn,
    RevealRefused,
    ShareRejected,
    SharesMessage,
    ShuffleMessage,
    ShuffleRejected,
    decode_message,
)
from buraco_p2p.crypto.elgamal import Ciphertext, deck_bytes, decode_deck, open_deck
from buraco_p2p.crypto.encoding import card_points, check_deck_size
from buraco_p2p.crypto.errors import NotACard, ProofError
from buraco_p2p.crypto.group import Point, RandomSource
from buraco_p2p.crypto.keys import KeyAnnouncement, KeyPair
from buraco_p2p.crypto.proofcheck import CHECK_NOW, ProofChecks
from buraco_p2p.crypto.shares import ShareBatch, make_share_batch, open_card, own_share
from buraco_p2p.crypto.shuffle import shuffle_and_prove
from buraco_p2p.crypto.transcript import ProofContext

__all__ = [
    "MAX_SEATS",
    "MIN_SEATS",
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
    "RevealRefused",
    "ShareRejected",
    "SharesAccepted",
    "SharesMessage",
    "ShuffleAccepted",
    "ShuffleMessage",
    "ShuffleRejected",
    "decode_message",
    "hands_by_seat",
]


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
    the deck size and the slots of each hand, in play order (one hand per seat)."""

    @property
    def deck_size(self) -> int: ...

    @property
    def hands(self) -> Sequence[Sequence[int]]: ...


def hands_by_seat(layout: LayoutLike, play_order: Sequence[int]) -> tuple[tuple[int, ...], ...]:
    """Hand slots indexed by seat, given the seat of each position of the play order.

    The table has `len(play_order)` seats; the layout must deal exactly that many hands.
    """
    n = len(play_order)
    if not MIN_SEATS <= n <= MAX_SEATS or sorted(play_order) != list(range(n)):
        raise ValueError(f"play order must be a permutation of 0..n-1 for 2..6 seats: {play_order}")
    if len(layout.hands) != n:
        raise ValueError(f"the layout deals {len(layout.hands)} hands for {n} seats")
    out: list[tuple[int, ...]] = [()] * n
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
    (`me=None`, no key pair) such as an offline log checker.

    `players` are the N player ids (2..6, distinct) in seat order; `play_order` the seat at
    each position of the layout's hands (default: seat k at position k).
    """

    def __init__(
        self,
        *,
        table_id: bytes,
        hand: int,
        players: Sequence[bytes],
        me: int | None,
        keypair: KeyPair | None,
        layout: LayoutLike,
        play_order: Sequence[int] | None = None,
        rng: RandomSource | None = None,
        checks: ProofChecks = CHECK_NOW,
    ) -> None:
        n = len(players)
        if not MIN_SEATS <= n <= MAX_SEATS or len(set(players)) != n:
            raise ValueError(f"a deck session needs 2..6 distinct player ids, not {n}")
        if me is not None and not 0 <= me < n:
            raise ValueError(f"seat must be 0..{n - 1}, not {me}")
        if (me is None) != (keypair is None) or (me is not None and rng is None):
            raise ValueError("a seat needs its key pair and a random source; a verifier neither")
        self.table_id = table_id
        self.hand = hand
        self.players = tuple(players)
        self.seats = n
        self.me = me
        self._keypair = keypair
        self._rng = rng
        self._checks = checks  # who runs the proof checks (`buraco_p2p.crypto.proofcheck`)
        self.deck_size = check_deck_size(layout.deck_size)
        self._hands = hands_by_seat(layout, range(n) if play_order is None else play_order)
        dealt = [s for h in self._hands for s in h]
        if len(set(dealt)) != len(dealt) or not all(0 <= s < self.deck_size for s in dealt):
            raise ValueError("hand slots must be distinct slots of the deck")

        self.phase = DeckPhase.KEYS
        self._keys: dict[int, Point] = {}
        self.table_key: Point | None = None
        self._deck: tuple[Ciphertext, ...] = open_deck(card_points(self.deck_size))
        self._shuffled = 0
        self._slots = [_Slot() for _ in range(self.deck_size)]
        # The requested slots some seat still owes a share for: `owed_by` is asked at every
        # entry of a hand, and scanning the whole deck each time was most of its cost.
        self._owing: set[int] = set()
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

    def decode(self, obj: object) -> DeckMessage:
        """`decode_message` bounded by this table's seats and deck size."""
        return decode_message(obj, seats=self.seats, deck_size=self.deck_size)

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
        """The seat a slot has been revealed to privately (its dealt hand, a draw, a pot)."""
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

    def remember_own(self, msg: DeckMessage, log_index: int) -> None:
        """Record a message this seat made outside the methods below (a shuffle built on a
        deck it has not verified yet, its own shares carried in a move), so that receiving it
        at `log_index` skips re-verifying our own proof. Anything else is still verified."""
        me, _, _ = self._mine()
        if msg.seat != me:
            raise ValueError(f"seat {me} cannot claim a message of seat {msg.seat}")
        self._sent.add((msg, log_index))

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
        return self.owed_by(self.me)

    def owed_by(self, seat: int) -> tuple[int, ...]:
        """Slots for which `seat` must still publish a share: every requested slot it has not
        shared, except the slots privately revealed to it (its share would open them to all)."""
        slots = self._slots
        return tuple(
            i
            for i in sorted(self._owing)
            if seat not in (s := slots[i]).shares and (s.public or s.owner != seat)
        )

    def _settle(self, slot: int) -> None:
        """Keep `slot` in `_owing` while a seat still owes its share, and only then: every
        seat owes a public slot, every seat but its owner a private one (whose owner never
        shares it, `owed_by`)."""
        st = self._slots[slot]
        if st.requested and len(st.shares) < (self.seats if st.public else self.seats - 1):
            self._owing.add(slot)
        else:
            self._owing.discard(slot)

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
        """Reveal `slots` to `owner` only (a stock draw, a pot taken): the N-1 other seats owe
        their shares, and the slots become `owner`'s.

        Refused with `RevealRefused` (nothing changed) for a slot outside the deck, a slot
        already another seat's (dealt to it, drawn by it, in a pot it took) or a slot already
        requested publicly. A slot already `owner`'s is accepted and changes nothing.
        """
        self._request(slots, owner, public=False)

    def request_public(self, slots: Iterable[int], owner: int | None = None) -> None:
        """Reveal `slots` to everyone: every seat, the owner included, owes its share.

        With `owner` (the seat a move shows the cards of: a meld, a discard), every slot not
        public yet must be in that seat's hand, i.e. revealed to it privately; anything else is
        refused with `RevealRefused`, nothing changed. A slot already public shows nothing new
        and is accepted as it is (a card taken with the discard pile and then melded). Without
        an owner the request is the table's, not a seat's (the face-up card of the deal, the
        end-of-hand count), and any slot of the deck may be named.
        """
        self._request(slots, owner, public=True)

    def _request(self, slots: Iterable[int], owner: int | None, *, public: bool) -> None:
        if owner is not None and (
            isinstance(owner, bool) or not isinstance(owner, int) or not 0 <= owner < self.seats
        ):
            raise RevealRefused(
                None, "bad_owner", f"no seat {owner!r} at a table of {self.seats}", ()
            )
        if not public and owner is None:
            raise RevealRefused(None, "bad_owner", "a private reveal needs the seat it is for")
        if self.phase is not DeckPhase.READY:
            raise RevealRefused(owner, "not_ready", "the deck is not shuffled yet: nothing to open")
        chosen: list[int] = []
        for s in slots:
            if isinstance(s, bool) or not isinstance(s, int) or not 0 <= s < self.deck_size:
                raise RevealRefused(
                    owner, "out_of_range", f"no slot {s!r} in a deck of {self.deck_size}", [s]
                )
            chosen.append(s)
        fresh: list[int] = []
        for s in dict.fromkeys(chosen):
            st = self._slots[s]
            if public:
                if st.public:
                    continue
                if owner is not None and st.owner != owner:
                    held = "nobody's hand" if st.owner is None else f"seat {st.owner}'s hand"
                    raise RevealRefused(
                        owner, "not_held", f"slot {s} is in {held}, not this seat's", [s]
                    )
            else:
                if st.public:
                    raise RevealRefused(owner, "already_public", f"slot {s} is public", [s])
                if st.owner == owner:
                    continue
                if st.owner is not None:
                    raise RevealRefused(owner, "owned", f"slot {s} is seat {st.owner}'s", [s])
            fresh.append(s)
        for s in fresh:
            st = self._slots[s]
            st.requested = True
            if public:
                st.public = True
            else:
                st.owner = owner
            self._settle(s)

    # -- receiving --------------------------------------------------------------------------

    def receive(self, msg: DeckMessage, log_index: int, *, sender: int) -> list[DeckEvent]:
        """Apply one logged deck message (ours included). Raises DeckError naming the sender,
        leaving the session unchanged, if it is out of turn or does not verify.

        `sender` is the seat whose signature the log entry carries, never read from the message:
        a key proof or a shuffle proof needs no secret of the seat it claims (anyone can prove a
        fresh key or a shuffle under another seat's id), so only the signer makes it that seat's.
        A message whose `seat` is not its signer's is OutOfTurn, naming the signer.
        """
        if isinstance(sender, bool) or not isinstance(sender, int) or not 0 <= sender < self.seats:
            raise ValueError(f"sender must be a seat 0..{self.seats - 1}, not {sender!r}")
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
                self._checks.key(ann)
        except ProofError as e:
            raise KeyRejected(seat, e.reason) from e
        if ann.public in self._keys.values():
            raise KeyRejected(seat, "key already announced by another seat")
        if len(self._keys) == self.seats - 1:
            total = ann.public
            for y in self._keys.values():
                total = total + y
            if total.is_identity():
                raise KeyRejected(seat, "the keys sum to the identity")
            self.table_key = total
            self.phase = DeckPhase.SHUFFLING
        self._keys[seat] = ann.public
        return [KeyAccepted(seat)]

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
                new = self._checks.shuffle(ctx, self.table_key, self._deck, msg.deck, msg.proof)
        except ProofError as e:
            raise ShuffleRejected(seat, e.reason, e.field) from e
        self._deck = new
        self._shuffled += 1
        events: list[DeckEvent] = [ShuffleAccepted(seat)]
        if self._shuffled == self.seats:
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
                self._checks.shares(self._keys[seat], cts, batch, self._ctx(seat, log_index))
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
            self._settle(slot)
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
        n = self.seats
        try:
            if st.public and len(shares) == n and not st.revealed:
                card = open_card(ct, [shares[s] for s in range(n)], self.deck_size)
                return slot, card, True
            if (
                not st.public
                and st.card is None
                and self.me is not None
                and self._keypair is not None
                and st.owner == self.me
                and len(shares) == n - 1
            ):
                others = [shares[s] for s in range(n) if s != self.me]
                mine = own_share(self._keypair, ct)
                return slot, open_card(ct, [*others, mine], self.deck_size), False
        except NotACard as e:
            # Every share and every shuffle here verified, so this cannot happen with honest
            # or cheating peers alike short of a broken proof; name the last sender.
            raise ShareRejected(sender, f"slot {slot} does not open to a card: {e}", [slot]) from e
        return None
