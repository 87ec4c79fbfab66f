"""The deck session: whole hand setups in one process at 2, 3, 4 and 6 seats (104, 108 and 162
cards), every way a peer can send something wrong (named, refused, state untouched), and every
reveal request a seat has no claim to (refused, state untouched)."""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable, Sequence

import msgpack
import pytest

from buraco_p2p.crypto.deck import (
    CardRevealed,
    CardSeen,
    DeckError,
    DeckEvent,
    DeckMessage,
    DeckPhase,
    DeckReady,
    DeckSession,
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
    hands_by_seat,
)
from buraco_p2p.crypto.elgamal import deck_bytes, decode_deck, encrypt
from buraco_p2p.crypto.encoding import card_point
from buraco_p2p.crypto.group import BASE, DeterministicRandomSource, Point, Scalar
from buraco_p2p.crypto.keys import KeyAnnouncement, KeyPair
from buraco_p2p.crypto.shuffle import (
    ShuffleProof,
    decode_and_verify,
    prove_shuffle,
    shuffle_and_prove,
    shuffle_deck,
)
from buraco_p2p.crypto.transcript import ProofContext
from buraco_p2p.engine.layout import deal_layout, make_layout, play_order
from buraco_p2p.rules import PRESETS

TABLE = b"table-deck-test!"
HAND = 4
PLAYERS = (b"ana", b"bruno", b"carla", b"davi")
SIX = (b"ana", b"bruno", b"carla", b"davi", b"edu", b"fabi")


@dataclasses.dataclass(frozen=True)
class RoundLayout:
    """A deal for any seat count, independent of the engine: `hand` cards each, dealt one at a
    time round the play order from slot 0, then the pots, then the stock."""

    deck_size: int
    hands: tuple[tuple[int, ...], ...]
    pots: tuple[tuple[int, ...], ...]
    stock: tuple[int, ...]

    @classmethod
    def make(cls, deck_size: int, seats: int, pots: Sequence[int], hand: int = 11) -> RoundLayout:
        dealt = seats * hand
        hands = tuple(tuple(range(k, dealt, seats)) for k in range(seats))
        pot_slots, nxt = [], dealt
        for size in pots:
            pot_slots.append(tuple(range(nxt, nxt + size)))
            nxt += size
        return cls(deck_size, hands, tuple(pot_slots), tuple(range(nxt, deck_size)))


class Table:
    """N seats and an offline verifier fed the same log."""

    def __init__(
        self,
        seed: bytes,
        *,
        dealer: int = 3,
        players: Sequence[bytes] = PLAYERS,
        layout: RoundLayout | None = None,
    ) -> None:
        n = len(players)
        self.n = n
        self.layout = make_layout(108, face_up=True) if layout is None else layout
        self.order = play_order(dealer, clockwise=True, players=n)
        self.seats = [
            DeckSession(
                table_id=TABLE,
                hand=HAND,
                players=players,
                me=i,
                keypair=KeyPair.generate(DeterministicRandomSource(seed + b"key%d" % i)),
                layout=self.layout,
                play_order=self.order,
                rng=DeterministicRandomSource(seed + b"rng%d" % i),
            )
            for i in range(n)
        ]
        self.verifier = DeckSession(
            table_id=TABLE,
            hand=HAND,
            players=players,
            me=None,
            keypair=None,
            layout=self.layout,
            play_order=self.order,
        )
        self.log: list[DeckMessage] = []
        self.events: list[list[DeckEvent]] = [[] for _ in range(n + 1)]

    @property
    def everyone(self) -> list[DeckSession]:
        return [*self.seats, self.verifier]

    def post(self, msg: DeckMessage) -> None:
        """Log a message: encode it to msgpack and back, then every session receives it."""
        wire = msgpack.unpackb(msgpack.packb(msg.to_wire()), raw=False)
        decoded = self.verifier.decode(wire)
        assert decoded == msg == decode_message(wire)
        index = len(self.log)
        self.log.append(msg)
        for k, s in enumerate(self.everyone):
            self.events[k] += s.receive(decoded, index, sender=msg.seat)

    def keys(self) -> None:
        for s in self.seats:
            self.post(s.key_message(len(self.log)))

    def shuffle(self, seat: int) -> None:
        self.post(self.seats[seat].shuffle_message(len(self.log)))

    def shuffles(self) -> None:
        for seat in range(self.n):
            self.shuffle(seat)

    def deal(self) -> None:
        for s in self.seats:
            self.post(s.shares_message(len(self.log)))


@pytest.fixture(scope="module")
def shuffled_table() -> Table:
    t = Table(b"deck")
    t.keys()
    t.shuffles()
    return t


@pytest.fixture
def table(shuffled_table: Table) -> Table:
    return copy.deepcopy(shuffled_table)


def _full_hand(table: Table) -> None:
    """Deal, check each seat sees exactly its hand, then open the whole deck publicly."""
    n, size = table.n, table.layout.deck_size
    assert all(s.phase is DeckPhase.READY for s in table.everyone)
    assert len({s.table_key for s in table.everyone}) == 1
    assert len({deck_bytes(s.deck) for s in table.everyone}) == 1
    for k in range(n + 1):
        assert sum(isinstance(e, DeckReady) for e in table.events[k]) == 1

    # Before the deal every seat owes shares for the slots of the N-1 other hands.
    hands = hands_by_seat(table.layout, table.order)
    for seat, s in enumerate(table.seats):
        others = sorted(x for o in range(n) if o != seat for x in hands[o])
        assert list(s.owed_slots()) == others
        assert len(others) == 11 * (n - 1)
    table.deal()

    # Each seat sees exactly its own 11 cards; the verifier sees none.
    for seat, s in enumerate(table.seats):
        known = s.known_cards()
        assert sorted(known) == sorted(hands[seat])
        assert len(known) == 11
        seen = [e for e in table.events[seat] if isinstance(e, CardSeen)]
        assert sorted(e.slot for e in seen) == sorted(hands[seat])
        assert s.owed_slots() == ()
    assert table.verifier.known_cards() == {}
    private = {slot: card for s in table.seats for slot, card in s.known_cards().items()}
    assert len(private) == 11 * n

    # Open the whole deck publicly (the table's request: no owner).
    for s in table.everyone:
        s.request_public(range(size))
    for seat, s in enumerate(table.seats):
        # Its own 11 slots now too, and all undealt ones; the shares already given are not.
        owed = set(s.owed_slots())
        assert len(owed) == size - 11 * (n - 1)
        assert set(hands[seat]) <= owed
    for s in table.seats:
        table.post(s.shares_message(len(table.log)))
    for k, s in enumerate(table.everyone):
        cards = s.public_cards()
        assert sorted(cards.values()) == list(range(size))
        assert sorted(cards) == list(range(size))
        revealed = [e for e in table.events[k] if isinstance(e, CardRevealed)]
        assert len(revealed) == size
    public = table.verifier.public_cards()
    assert all(public[slot] == card for slot, card in private.items())
    # The shuffle really moved the cards (probability of the identity permutation ~ 1/size!).
    assert [public[i] for i in range(size)] != list(range(size))


def _stock_draw(table: Table) -> None:
    """A stock draw is owed by the N-1 others and seen by the drawer alone; melding it later
    lacks only the drawer's share."""
    table.deal()
    n, drawer = table.n, 1
    stock = table.layout.stock[0]
    for s in table.everyone:
        s.request_private([stock], owner=drawer)
    assert table.seats[drawer].owed_slots() == ()
    others = [k for k in range(n) if k != drawer]
    for seat in others:
        assert table.seats[seat].owed_slots() == (stock,)
        assert table.seats[drawer].card(stock) is None
        table.post(table.seats[seat].shares_message(len(table.log)))
    assert table.seats[drawer].card(stock) is not None
    assert all(table.seats[k].card(stock) is None for k in others)
    assert table.verifier.card(stock) is None
    for s in table.everyone:
        s.request_public([stock], owner=drawer)
    assert table.seats[drawer].owed_slots() == (stock,)
    assert all(table.seats[k].owed_slots() == () for k in others)
    table.post(table.seats[drawer].shares_message(len(table.log)))
    assert {s.card(stock) for s in table.everyone} == {table.seats[drawer].card(stock)}


def test_full_hand_setup(table: Table) -> None:
    _full_hand(table)


def test_stock_draw_is_private_to_the_drawer(table: Table) -> None:
    _stock_draw(table)


# Two seats with the 104-card deck, three with 108 (pots of 18 and 11), six with three packs
# and six jokers (162, three pots).
N_TABLES = {
    2: (PLAYERS[:2], RoundLayout.make(104, 2, (11, 11))),
    3: (PLAYERS[:3], RoundLayout.make(108, 3, (18, 11))),
    6: (SIX, RoundLayout.make(162, 6, (11, 11, 11))),
}


@pytest.fixture(scope="module", params=sorted(N_TABLES), ids=lambda n: f"{n}-seats")
def shuffled_n_table(request: pytest.FixtureRequest) -> Table:
    players, layout = N_TABLES[request.param]
    t = Table(b"deck-n%d" % request.param, players=players, layout=layout, dealer=0)
    t.keys()
    t.shuffles()
    return t


@pytest.fixture
def n_table(shuffled_n_table: Table) -> Table:
    return copy.deepcopy(shuffled_n_table)


def test_full_hand_setup_at_every_seat_count(n_table: Table) -> None:
    assert len(n_table.seats[0].deck) == n_table.layout.deck_size
    _full_hand(n_table)


def test_stock_draw_at_every_seat_count(n_table: Table) -> None:
    _stock_draw(n_table)


def test_a_pot_goes_to_one_seat_at_every_seat_count(n_table: Table) -> None:
    """Taking a pot is a private reveal of all its slots; afterwards no other seat can claim
    any of them, privately or by showing it."""
    n_table.deal()
    taker = n_table.n - 1
    pot = n_table.layout.pots[-1]
    for s in n_table.everyone:
        s.request_private(pot, owner=taker)
    for s in n_table.everyone:
        with pytest.raises(RevealRefused) as e:
            s.request_private(pot[:1], owner=0)
        assert e.value.code == "owned"
        with pytest.raises(RevealRefused) as e:
            s.request_public(pot[-1:], owner=0)
        assert e.value.code == "not_held"
    for seat in range(n_table.n - 1):
        n_table.post(n_table.seats[seat].shares_message(len(n_table.log)))
    assert sorted(n_table.seats[taker].known_cards()) == sorted(
        [*n_table.seats[taker].hand_slots(taker), *pot]
    )


def _owed_by_scan(s: DeckSession, seat: int) -> tuple[int, ...]:
    """What `owed_by` answers, by the rule itself over every slot of the deck."""
    return tuple(
        i
        for i in range(s.deck_size)
        if s._slots[i].requested
        and seat not in s._slots[i].shares
        and (s._slots[i].public or s.owner(i) != seat)
    )


def test_what_each_seat_owes_follows_every_request_and_share(n_table: Table) -> None:
    """`owed_by` keeps the slots still owed as requests and shares come, rather than scanning
    the deck: a private pot shared by some, then shown by its taker (now owed by the taker
    too), then shared by all, reads the same as the scan at every step, for every seat."""

    def agrees() -> None:
        for s in n_table.everyone:
            for k in range(n_table.n):
                assert s.owed_by(k) == _owed_by_scan(s, k)

    n_table.deal()
    agrees()
    taker = n_table.n - 1
    pot = n_table.layout.pots[-1]
    for s in n_table.everyone:
        s.request_private(pot, owner=taker)
    agrees()
    n_table.post(n_table.seats[0].shares_message(len(n_table.log)))
    agrees()
    shown = pot[:3]
    for s in n_table.everyone:
        s.request_public(shown, owner=taker)
    agrees()
    assert shown[0] in n_table.seats[taker].owed_slots()
    for seat in range(n_table.n):
        if n_table.seats[seat].owed_slots():
            n_table.post(n_table.seats[seat].shares_message(len(n_table.log)))
            agrees()
    assert all(s.owed_by(k) == () for s in n_table.everyone for k in range(n_table.n))


# ---- refusals -----------------------------------------------------------------------------


def _snapshot(s: DeckSession) -> tuple[object, ...]:
    return (
        s.phase,
        s.table_key,
        deck_bytes(s.deck),
        s.next_shuffler,
        tuple(s.owed_by(k) for k in range(s.seats)),
        tuple(s.owner(i) for i in range(s.deck_size)),
        tuple(sorted(s.known_cards().items())),
    )


def _refused(table: Table, msg: DeckMessage, exc: type[DeckError], party: int) -> None:
    """Every session other than the sender refuses the message and is left unchanged."""
    for k, s in enumerate(table.everyone):
        if k == party:
            continue
        before = _snapshot(s)
        with pytest.raises(exc) as e:
            s.receive(msg, len(table.log), sender=party)
        assert e.value.party == party
        assert f"seat {party}" in str(e.value)
        assert _snapshot(s) == before


def _fresh_keys_table() -> Table:
    return Table(b"deck-keys")


def test_bad_key_proof_is_refused() -> None:
    t = _fresh_keys_table()
    msg = t.seats[1].key_message(0)
    bad = KeyMessage(1, msg.key[:40] + bytes([msg.key[40] ^ 1]) + msg.key[41:])
    _refused(t, bad, KeyRejected, 1)
    # The same key replayed at another log index does not verify either.
    t.post(t.seats[0].key_message(0))
    _refused(t, msg, KeyRejected, 1)


def test_duplicate_key_and_early_shuffle_are_out_of_turn() -> None:
    t = _fresh_keys_table()
    t.post(t.seats[0].key_message(0))
    first = t.log[0]
    assert isinstance(first, KeyMessage)
    again = KeyMessage(0, first.key)
    _refused(t, again, OutOfTurn, 0)
    early = ShuffleMessage(2, bytes(64 * 108), bytes(32 * (5 * 108 + 9)))
    _refused(t, early, OutOfTurn, 2)


def _two_shuffles_table() -> Table:
    t = Table(b"deck-cheat")
    t.keys()
    t.shuffle(0)
    t.shuffle(1)
    return t


@pytest.fixture(scope="module")
def mid_shuffle() -> Table:
    return _two_shuffles_table()


def test_a_seat_cannot_speak_for_another(mid_shuffle: Table) -> None:
    """A proof context names the claimed seat, but a fresh key or a shuffle needs no secret of
    that seat: anybody can prove one under another seat's id. Only the signer of the log entry
    says who sent it, and a message claiming another seat is refused, naming the signer."""
    t = _fresh_keys_table()
    rng = DeterministicRandomSource(b"impostor")
    fake = KeyAnnouncement.create(
        KeyPair.generate(rng), ProofContext(TABLE, HAND, 0, PLAYERS[2]), rng
    )
    fake.verify()  # a perfectly valid proof for seat 2's context
    _refused(t, KeyMessage(2, fake.to_bytes()), OutOfTurn, 3)
    t.post(t.seats[2].key_message(0))  # seat 2's own key still goes through

    t = copy.deepcopy(mid_shuffle)
    y = t.seats[3].table_key
    assert y is not None
    ctx = ProofContext(TABLE, HAND, len(t.log), PLAYERS[2])
    out, proof = shuffle_and_prove(ctx, y, t.seats[3].deck, rng)
    msg = ShuffleMessage(2, deck_bytes(out), proof.to_bytes())
    decode_and_verify(ctx, y, t.seats[3].deck, msg.deck, msg.proof)  # valid as seat 2's
    _refused(t, msg, OutOfTurn, 3)
    assert all(s.next_shuffler == 2 for s in t.everyone)


def test_shuffle_out_of_order_is_refused(mid_shuffle: Table) -> None:
    t = copy.deepcopy(mid_shuffle)
    msg = t.seats[2].shuffle_message(len(t.log))
    wrong = dataclasses.replace(msg, seat=3)
    _refused(t, wrong, OutOfTurn, 3)


def test_cheating_shuffle_is_refused_and_named(mid_shuffle: Table) -> None:
    t = copy.deepcopy(mid_shuffle)
    cheater = t.seats[2]
    assert cheater.table_key is not None
    y = cheater.table_key
    rng = DeterministicRandomSource(b"cheat")
    out, w = shuffle_deck(cheater.deck, y, rng)
    # Replace one card by a joker of the cheater's choosing, then prove as best it can.
    forged = list(out)
    forged[5] = encrypt(card_point(104), Scalar.random_nonzero(rng), y)
    ctx = ProofContext(TABLE, HAND, len(t.log), PLAYERS[2])
    proof = prove_shuffle(ctx, y, cheater.deck, forged, w, rng)
    msg = ShuffleMessage(2, deck_bytes(forged), proof.to_bytes())
    _refused(t, msg, ShuffleRejected, 2)
    # An honest shuffle with a proof for another log index is refused too.
    honest = t.seats[2].shuffle_message(len(t.log) + 1)
    _refused(t, honest, ShuffleRejected, 2)
    # Even by its author: only its own message at the index it was made for is taken on trust.
    with pytest.raises(ShuffleRejected):
        t.seats[2].receive(honest, len(t.log), sender=2)
    # And the honest one at the right index is accepted by everyone.
    t.post(t.seats[2].shuffle_message(len(t.log)))
    assert all(s.next_shuffler == 3 for s in t.everyone)


def test_tampered_shuffle_bytes_are_refused(mid_shuffle: Table) -> None:
    t = copy.deepcopy(mid_shuffle)
    msg = t.seats[2].shuffle_message(len(t.log))
    ctx = ProofContext(TABLE, HAND, len(t.log), PLAYERS[2])
    deck_in = t.seats[0].deck
    assert t.seats[0].table_key is not None
    decode_and_verify(ctx, t.seats[0].table_key, deck_in, msg.deck, msg.proof)
    proof = ShuffleProof.from_bytes(msg.proof, 108)
    out = decode_deck(msg.deck, 108)
    # a card's c2 bumped, a proof response bumped, a chain element replaced by garbage
    bumped = list(out)
    bumped[7] = dataclasses.replace(bumped[7], c2=bumped[7].c2 + BASE)
    cases = [
        dataclasses.replace(msg, deck=deck_bytes(bumped)),
        dataclasses.replace(
            msg,
            proof=dataclasses.replace(proof, s1=proof.s1 + Scalar.from_int(1)).to_bytes(),
        ),
        dataclasses.replace(msg, proof=msg.proof[:3500] + b"\xff" * 32 + msg.proof[3532:]),
    ]
    for bad in cases:
        _refused(t, bad, ShuffleRejected, 2)


def test_bad_shares_are_refused_and_named(table: Table) -> None:
    msg = table.seats[1].shares_message(len(table.log))
    batch = msg.batch
    # one share replaced by another valid point
    first = Point.from_bytes(batch[:32])
    swapped = (first + BASE).to_bytes() + batch[32:]
    _refused(table, dataclasses.replace(msg, batch=swapped), ShareRejected, 1)
    # the proof's response bumped
    resp = int.from_bytes(batch[-32:], "little")
    bumped = batch[:-32] + ((resp + 1) % (2**252)).to_bytes(32, "little")
    _refused(table, dataclasses.replace(msg, batch=bumped), ShareRejected, 1)
    # a share that is the identity, and one that is not a canonical point
    _refused(table, dataclasses.replace(msg, batch=bytes(32) + batch[32:]), ShareRejected, 1)
    _refused(
        table,
        dataclasses.replace(msg, batch=b"\xff" * 31 + b"\x7f" + batch[32:]),
        ShareRejected,
        1,
    )
    # proofs are bound to their log index
    late = table.seats[1].shares_message(len(table.log) + 3)
    _refused(table, late, ShareRejected, 1)
    # and the right one goes through
    table.post(table.seats[1].shares_message(len(table.log)))


def test_shares_not_owed_are_out_of_turn(table: Table) -> None:
    hands = hands_by_seat(table.layout, table.order)
    msg = table.seats[1].shares_message(len(table.log))
    # Seat 1 publishing a share of its own hand in a private deal would reveal its card.
    own = tuple(sorted(hands[1][:2]))
    _refused(table, dataclasses.replace(msg, slots=own, batch=msg.batch[: 64 + 64]), OutOfTurn, 1)
    table.post(msg)
    _refused(table, msg, OutOfTurn, 1)  # twice


# ---- reveal requests a seat has no claim to ------------------------------------------------


def _request_refused(
    table: Table, call: Callable[[DeckSession], None], code: str, party: int | None
) -> None:
    """Every session (seats and verifier) refuses the request with a typed DeckError naming
    the seat, never a bare ValueError, and is left exactly as it was."""
    for s in table.everyone:
        before = _snapshot(s)
        with pytest.raises(RevealRefused) as e:
            call(s)
        assert isinstance(e.value, DeckError)
        assert e.value.code == code
        assert e.value.party == party
        assert _snapshot(s) == before


def test_reveal_of_another_seats_dealt_slot_is_refused(table: Table) -> None:
    table.deal()
    hands = hands_by_seat(table.layout, table.order)
    theirs = hands[2][3]
    # Shown by seat 1 as if it were its own (a meld or discard naming seat 2's slot) ...
    _request_refused(table, lambda s: s.request_public([theirs], owner=1), "not_held", 1)
    # ... or drawn by seat 1 privately.
    _request_refused(table, lambda s: s.request_private([theirs], owner=1), "owned", 1)
    # Mixed with a slot seat 1 does hold, the whole request is refused.
    mine = hands[1][0]
    _request_refused(table, lambda s: s.request_public([mine, theirs], owner=1), "not_held", 1)
    assert table.seats[0].owed_slots() == ()
    # Its owner may show it.
    for s in table.everyone:
        s.request_public([theirs], owner=2)
    assert table.seats[2].owed_slots() == (theirs,)


def test_pot_slot_claimed_by_the_wrong_seat_is_refused(table: Table) -> None:
    table.deal()
    pot0, pot1 = table.layout.pots
    # A pot nobody has taken is in nobody's hand: a seat cannot show one of its cards.
    _request_refused(table, lambda s: s.request_public([pot0[4]], owner=1), "not_held", 1)
    # Seat 3 takes pot 0; then neither a private nor a public claim by seat 1 goes through.
    for s in table.everyone:
        s.request_private(pot0, owner=3)
    _request_refused(table, lambda s: s.request_private([pot0[0]], owner=1), "owned", 1)
    _request_refused(table, lambda s: s.request_public([pot0[0]], owner=1), "not_held", 1)
    # Pot 1 partly taken by seat 0 in one request with a pot 0 slot: refused as a whole.
    _request_refused(table, lambda s: s.request_private([pot1[0], pot0[1]], owner=0), "owned", 0)
    # The legitimate taker still gets its pot: the three others owe exactly its 11 slots.
    for seat in (0, 1, 2):
        assert table.seats[seat].owed_slots() == pot0
        table.post(table.seats[seat].shares_message(len(table.log)))
    assert set(pot0) <= set(table.seats[3].known_cards())
    assert all(table.seats[k].card(pot0[0]) is None for k in (0, 1, 2))


@pytest.mark.parametrize("bad", [108, 1000, -1, True, "5", 2.0, None])
def test_slot_outside_the_deck_is_refused(table: Table, bad: object) -> None:
    table.deal()
    stock = table.layout.stock[0]
    _request_refused(
        table,
        lambda s: s.request_private([stock, bad], owner=1),  # type: ignore[list-item]
        "out_of_range",
        1,
    )
    _request_refused(
        table,
        lambda s: s.request_public([bad], owner=None),  # type: ignore[list-item]
        "out_of_range",
        None,
    )


@pytest.mark.parametrize("owner", [4, -1, True, "1"])
def test_reveal_to_no_seat_of_the_table_is_refused(table: Table, owner: object) -> None:
    table.deal()
    stock = table.layout.stock[0]
    _request_refused(
        table,
        lambda s: s.request_private([stock], owner=owner),
        "bad_owner",
        None,  # type: ignore[arg-type]
    )
    _request_refused(
        table,
        lambda s: s.request_public([stock], owner=owner),
        "bad_owner",
        None,  # type: ignore[arg-type]
    )


def test_private_reveal_of_a_public_card_is_refused(table: Table) -> None:
    table.deal()
    up = table.layout.face_up
    assert up is not None
    for s in table.everyone:
        s.request_public([up])
    _request_refused(table, lambda s: s.request_private([up], owner=0), "already_public", 0)


def test_requests_that_show_nothing_new_are_accepted(table: Table) -> None:
    """A card already public may be named again by anyone (taken with the pile, then melded),
    and a slot already a seat's may be requested for it again: neither owes anything more."""
    table.deal()
    hands = hands_by_seat(table.layout, table.order)
    discarded = hands[0][0]
    for s in table.everyone:
        s.request_public([discarded], owner=0)
    table.post(table.seats[0].shares_message(len(table.log)))
    for s in table.everyone:
        before = _snapshot(s)
        s.request_public([discarded], owner=2)
        s.request_private(hands[1], owner=1)
        assert _snapshot(s) == before


def test_verifier_only_session_sends_nothing(table: Table) -> None:
    with pytest.raises(RuntimeError):
        table.verifier.shares_message(0)
    assert table.verifier.owed_slots() == ()


# ---- wire form ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "obj",
    [
        None,
        [],
        {"type": "deck/key", "seat": 0},
        {"type": "deck/key", "seat": 0, "key": b"x" * 95},
        {"type": "deck/key", "seat": 0, "key": "x" * 96},
        {"type": "deck/key", "seat": 6, "key": b"x" * 96},
        {"type": "deck/key", "seat": -1, "key": b"x" * 96},
        {"type": "deck/key", "seat": True, "key": b"x" * 96},
        {"type": "deck/key", "seat": 0, "key": b"x" * 96, "extra": 1},
        {"type": "deck/nope", "seat": 0},
        {"type": "deck/shuffle", "seat": 1, "deck": b"x" * 65, "proof": b""},
        {"type": "deck/shuffle", "seat": 1, "deck": b"x" * 64, "proof": b"x" * 10},
        {"type": "deck/shuffle", "seat": 1, "deck": b"x" * 64 * 163, "proof": b""},
        {"type": "deck/shares", "seat": 1, "slots": [], "batch": b"x" * 64},
        {"type": "deck/shares", "seat": 1, "slots": [3, 2], "batch": b"x" * 128},
        {"type": "deck/shares", "seat": 1, "slots": [2, 2], "batch": b"x" * 128},
        {"type": "deck/shares", "seat": 1, "slots": [2, 162], "batch": b"x" * 128},
        {"type": "deck/shares", "seat": 1, "slots": list(range(163)), "batch": b"x" * 5280},
        {"type": "deck/shares", "seat": 1, "slots": [2], "batch": b"x" * 97},
        {"type": "deck/shares", "seat": 1, "slots": "ab", "batch": b"x" * 128},
        {1: "deck/key"},
    ],
)
def test_malformed_wire_objects(obj: object) -> None:
    with pytest.raises(MalformedMessage):
        decode_message(obj)


def test_wire_bounds_are_the_tables_own() -> None:
    """By default a decoder allows the largest table and deck (6 seats, 162 cards); a session
    bounds them by its own, so a four-seat table refuses seat 4 and a 108-card one slot 108."""
    key = {"type": "deck/key", "seat": 5, "key": b"x" * 96}
    shares = {"type": "deck/shares", "seat": 1, "slots": [2, 161], "batch": b"x" * 128}
    shuffle = {
        "type": "deck/shuffle",
        "seat": 1,
        "deck": b"x" * 64 * 162,
        "proof": b"x" * 32 * (5 * 162 + 9),
    }
    for obj in (key, shares, shuffle):
        decode_message(obj)
    with pytest.raises(MalformedMessage):
        decode_message(key, seats=5)
    for obj in (shares, shuffle):
        with pytest.raises(MalformedMessage):
            decode_message(obj, deck_size=156)
    with pytest.raises(ValueError):
        decode_message(key, seats=7)
    with pytest.raises(ValueError):
        decode_message(key, deck_size=163)


def test_wire_roundtrip() -> None:
    msgs: Sequence[DeckMessage] = [
        KeyMessage(2, bytes(range(96))),
        ShuffleMessage(0, b"\x01" * 64 * 3, b"\x02" * 32 * (5 * 3 + 9)),
        SharesMessage(3, (1, 5, 9), b"\x03" * (32 * 3 + 64)),
    ]
    for m in msgs:
        assert decode_message(msgpack.unpackb(msgpack.packb(m.to_wire()))) == m


def test_session_arguments_are_checked() -> None:
    layout = make_layout(104, face_up=False)
    kp = KeyPair.generate(DeterministicRandomSource(b"k"))
    rng = DeterministicRandomSource(b"r")
    with pytest.raises(ValueError):
        DeckSession(
            table_id=TABLE, hand=1, players=PLAYERS[:3], me=0, keypair=kp, layout=layout, rng=rng
        )
    with pytest.raises(ValueError):
        DeckSession(
            table_id=TABLE, hand=1, players=PLAYERS, me=0, keypair=None, layout=layout, rng=rng
        )
    with pytest.raises(ValueError):
        DeckSession(
            table_id=TABLE,
            hand=1,
            players=PLAYERS,
            me=0,
            keypair=kp,
            layout=layout,
            play_order=(0, 0, 1, 2),
            rng=rng,
        )
    s = DeckSession(
        table_id=TABLE, hand=1, players=PLAYERS, me=0, keypair=kp, layout=layout, rng=rng
    )
    assert len(s.deck) == 104
    with pytest.raises(RevealRefused) as e:
        s.request_private([0], owner=1)
    assert e.value.code == "not_ready"
    for bad in ([], PLAYERS[:1], [*SIX, b"gil"], [b"a", b"b", b"a"]):
        with pytest.raises(ValueError):
            DeckSession(table_id=TABLE, hand=1, players=bad, me=None, keypair=None, layout=layout)
    # A layout that deals another number of hands than there are seats, or an unknown deck.
    with pytest.raises(ValueError):
        DeckSession(
            table_id=TABLE,
            hand=1,
            players=PLAYERS[:3],
            me=None,
            keypair=None,
            layout=RoundLayout.make(108, 4, (11, 11)),
        )
    with pytest.raises(ValueError):
        DeckSession(
            table_id=TABLE,
            hand=1,
            players=PLAYERS[:2],
            me=None,
            keypair=None,
            layout=RoundLayout.make(120, 2, (11, 11)),
        )
    with pytest.raises(ValueError):
        DeckSession(table_id=TABLE, hand=1, players=SIX, me=6, keypair=kp, layout=layout, rng=rng)


@pytest.mark.slow
@pytest.mark.parametrize("dealer", range(4))
def test_soak_full_hands_every_dealer(dealer: int) -> None:
    t = Table(b"soak-%d" % dealer, dealer=dealer)
    t.keys()
    for seat in range(4):
        t.shuffle(seat)
    t.deal()
    hands = hands_by_seat(t.layout, t.order)
    for seat, s in enumerate(t.seats):
        assert sorted(s.known_cards()) == sorted(hands[seat])
    for s in t.everyone:
        s.request_public(range(108))
    for s in t.seats:
        t.post(s.shares_message(len(t.log)))
    assert sorted(t.verifier.public_cards().values()) == list(range(108))


@pytest.mark.parametrize("players", [2, 3, 4, 6])
def test_sessions_take_the_engines_layout_at_every_seat_count(players: int) -> None:
    """The rules' own deal layout and play order at each seat count build a deck session whose
    hands are the layout's, position k of the play order to its seat."""
    rules = PRESETS["classic"].with_overrides({"players": players})
    layout = deal_layout(rules)
    order = play_order(1, clockwise=True, players=players)
    ids = [b"player-%d" % i for i in range(players)]
    s = DeckSession(
        table_id=TABLE, hand=0, players=ids, me=None, keypair=None, layout=layout, play_order=order
    )
    assert s.seats == players and len(s.deck) == rules.deck_size
    assert s.deck_size == (162 if players == 6 else 108)
    for pos, seat in enumerate(order):
        assert s.hand_slots(seat) == layout.hands[pos]
