"""Test vectors of the deck at other seat counts and the six-seat deck (docs/protocol.md 1.6-1.8).

- `deck_2.json`, `deck_3.json`: a whole deck session of one hand at two seats (104 cards) and
  at three (108 cards): every seat's key announcement, the shuffles in seat order and the deal's
  share batches, as the deck messages of 1.8 with their log index and sender, then what each
  seat learns. The seats' secrets are included so that a reader can open every hand.
- `shuffle.json`: one shuffle of an open deck of 8 test points with its proof, its permutation
  and re-encryption factors.
- `shuffle_162.json`: one shuffle of the 162-card open deck (the real card points of 1.4) with
  its proof, its permutation and re-encryption factors.

They are written by `protocol.gen.crypto` (which owns the crypto layer's files); the functions
here only build them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from buraco_p2p.crypto.deck import DeckMessage, DeckSession
from buraco_p2p.crypto.elgamal import deck_bytes, open_deck
from buraco_p2p.crypto.encoding import card_points
from buraco_p2p.crypto.group import DeterministicRandomSource, Point, Scalar
from buraco_p2p.crypto.keys import KeyPair
from buraco_p2p.crypto.shuffle import generators, prove_shuffle, shuffle_deck, verify_shuffle
from buraco_p2p.crypto.transcript import ProofContext

__all__ = ["deck_session_vector", "player_id", "shuffle_162_vector", "shuffle_vector"]

TABLE_ID: Final = bytes.fromhex("0f1e2d3c4b5a69788796a5b4c3d2e1f0")
FIRST_INDEX: Final = 3
"""Log index of the first key announcement (a real log has its genesis and the seat draw
before it)."""


def player_id(k: int) -> bytes:
    """A player id as a real client has it: a 32-byte Ed25519 identity public key, here the
    one whose RFC 8032 seed is SHA-256("buraco-p2p/vectors/player/" || ascii_decimal(k))."""
    seed = hashlib.sha256(b"buraco-p2p/vectors/player/%d" % k).digest()
    public = Ed25519PrivateKey.from_private_bytes(seed).public_key()
    return public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


@dataclass(frozen=True)
class _Layout:
    deck_size: int
    hands: tuple[tuple[int, ...], ...]


def _message_json(msg: DeckMessage) -> dict[str, object]:
    return {k: v.hex() if isinstance(v, bytes) else v for k, v in msg.to_wire().items()}


def deck_session_vector(seats: int, deck_size: int, dealer: int) -> dict[str, object]:
    """One hand's deck protocol at `seats`, from fresh keys to the end of the deal."""
    hand = 2
    players = [player_id(k) for k in range(seats)]
    order = tuple((dealer + 1 + k) % seats for k in range(seats))
    layout = _Layout(deck_size, tuple(tuple(range(k, 11 * seats, seats)) for k in range(seats)))
    tag = b"buraco-p2p/vectors/deck/%d/" % seats
    keypairs = [
        KeyPair.generate(DeterministicRandomSource(tag + b"key%d" % i)) for i in range(seats)
    ]
    peers = [
        DeckSession(
            table_id=TABLE_ID,
            hand=hand,
            players=players,
            me=i,
            keypair=keypairs[i],
            layout=layout,
            play_order=order,
            rng=DeterministicRandomSource(tag + b"rng%d" % i),
        )
        for i in range(seats)
    ]
    verifier = DeckSession(
        table_id=TABLE_ID,
        hand=hand,
        players=players,
        me=None,
        keypair=None,
        layout=layout,
        play_order=order,
    )
    log: list[dict[str, object]] = []

    def post(msg: DeckMessage) -> None:
        index = FIRST_INDEX + len(log)
        for p in (*peers, verifier):
            p.receive(msg, index, sender=msg.seat)
        log.append({"index": index, "sender": msg.seat, "message": _message_json(msg)})

    for p in peers:
        post(p.key_message(FIRST_INDEX + len(log)))
    for p in peers:
        post(p.shuffle_message(FIRST_INDEX + len(log)))
    for p in peers:
        post(p.shares_message(FIRST_INDEX + len(log)))
    if verifier.table_key is None:
        raise AssertionError("the vector's deck never became ready")
    return {
        "description": f"the deck protocol of one hand at {seats} seats, {deck_size} cards "
        "(docs/protocol.md 1.8): key announcements, the shuffles in seat order and the deal's "
        "share batches, each a deck message with the log index it is bound to and the seat "
        "that signed it; then each seat's private cards. Play is clockwise: `play_order` is "
        "3.3's for `dealer` with s = +1 (the first player is the seat after the dealer), and "
        "position k of `hands_in_play_order` is seat play_order[k]'s hand (3.3's layout without "
        "pots or a face-up card: the deck protocol deals only the hands). Player ids are "
        "Ed25519 public keys (see player_id_seeds). Shuffle proofs depend on the prover's "
        "random stream: check them, do not expect to reproduce them.",
        "seats": seats,
        "deck_size": deck_size,
        "table_id": TABLE_ID.hex(),
        "hand": hand,
        "players": [p.hex() for p in players],
        "player_id_seeds": [
            hashlib.sha256(b"buraco-p2p/vectors/player/%d" % k).digest().hex() for k in range(seats)
        ],
        "dealer": dealer,
        "play_order": list(order),
        "hands_in_play_order": [list(h) for h in layout.hands],
        "secrets": [kp.secret.to_bytes().hex() for kp in keypairs],
        "table_key": verifier.table_key.to_bytes().hex(),
        "log": log,
        "cards_seen": [
            [[slot, card] for slot, card in sorted(p.known_cards().items())] for p in peers
        ],
    }


def shuffle_vector() -> dict[str, object]:
    """A shuffle of an 8-card open deck with its proof (`shuffle.json`).

    Everything is derived from fixed seeds, so regenerating gives the same bytes; a second
    implementation can check its verifier against `proof` and its prover against all of it
    (given the same random stream, see docs/protocol.md 1.7).
    """
    n = 8
    cards = [Point.hash_to_group(b"buraco-p2p/vectors/shuffle/card", bytes([i])) for i in range(n)]
    ctx = ProofContext(table_id=bytes(range(16)), hand=3, log_index=17, prover=b"seat-1")
    return _shuffle(
        b"buraco-p2p/vectors/shuffle",
        cards,
        ctx,
        "Terelius-Wikstrom shuffle of an open deck of 8 points (section 1.7)",
    )


def shuffle_162_vector() -> dict[str, object]:
    """A shuffle of the 162-card open deck under a fixed table key, with its proof."""
    ctx = ProofContext(table_id=TABLE_ID, hand=0, log_index=9, prover=player_id(5))
    return _shuffle(
        b"buraco-p2p/vectors/shuffle/162",
        card_points(162),
        ctx,
        "Terelius-Wikstrom shuffle of the 162-card open deck (card ids 0..161, "
        "points of section 1.4) by the sixth seat of a six-seat table (section 1.7); drawn as "
        "shuffle.json's vector is, from the stream of rng_seed",
    )


def _shuffle(
    seed: bytes, cards: Sequence[Point], ctx: ProofContext, description: str
) -> dict[str, object]:
    """One shuffle of the open deck of `cards`: the table key, then the shuffle and its
    proof, drawn in that order from the stream of `seed`; the proof is checked before it is
    written."""
    rng = DeterministicRandomSource(seed)
    n = len(cards)
    table_key = Point.base_mul(Scalar.random_nonzero(rng))
    deck_in = open_deck(cards)
    deck_out, witness = shuffle_deck(deck_in, table_key, rng)
    proof = prove_shuffle(ctx, table_key, deck_in, deck_out, witness, rng)
    verify_shuffle(ctx, table_key, deck_in, deck_out, proof)
    gens = generators(ctx.table_id, ctx.hand, n)
    return {
        "description": description,
        "rng_seed": seed.hex(),
        "table_id": ctx.table_id.hex(),
        "hand": ctx.hand,
        "log_index": ctx.log_index,
        "prover": ctx.prover.hex(),
        "n": n,
        "table_key": table_key.to_bytes().hex(),
        "generators": [g.to_bytes().hex() for g in (gens.h, *gens.hs)],
        "input_deck": deck_bytes(deck_in).hex(),
        "permutation": list(witness.permutation),
        "randomness": [r.to_bytes().hex() for r in witness.randomness],
        "output_deck": deck_bytes(deck_out).hex(),
        "proof": proof.to_bytes().hex(),
    }
