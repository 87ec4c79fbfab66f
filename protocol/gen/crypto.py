"""Deterministic test vectors for the crypto layer, written to protocol/vectors/*.json.

Every value comes from fixed seeds through `DeterministicRandomSource`, so regenerating gives the
same bytes. Each file lists its inputs and the exact outputs an independent implementation must
reproduce (or, for proofs that depend on the prover's random stream, accept).

    python -m protocol.gen.crypto           # check the files, exit 1 on any difference
    python -m protocol.gen.crypto --write   # rewrite them

Rendering, writing and checking are shared with the other layers' vectors in
`protocol.gen.files`.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Final

from buraco_p2p.crypto.elgamal import encrypt
from buraco_p2p.crypto.encoding import CARD_DOMAIN, MAX_CARDS, card_point
from buraco_p2p.crypto.group import BASE, DeterministicRandomSource, Point, Scalar
from buraco_p2p.crypto.keys import SCHNORR_LABEL, KeyAnnouncement, KeyPair, aggregate_key
from buraco_p2p.crypto.randomness import (
    CoinContext,
    CommitReveal,
    commitment,
    new_nonce,
    permutation,
    uniform_choice,
    uniform_int,
)
from buraco_p2p.crypto.shares import (
    CP_BATCH_LABEL,
    CP_LABEL,
    make_share,
    make_share_batch,
    open_card,
    open_private,
    verify_share,
    verify_share_batch,
)
from buraco_p2p.crypto.transcript import ProofContext, Transcript, encode_item
from protocol.gen import files as vectorfiles
from protocol.gen.deck import deck_session_vector, shuffle_162_vector, shuffle_vector
from protocol.gen.game import card_text

__all__ = ["FILES", "generate", "main"]

FILES: Final = (
    "group.json",
    "transcript.json",
    "keys.json",
    "cards.json",
    "shares.json",
    "randomness.json",
    "shuffle.json",
    "shuffle_162.json",
    "deck_2.json",
    "deck_3.json",
)

Vector = vectorfiles.Vector

TABLE_ID: Final = bytes.fromhex("0f1e2d3c4b5a69788796a5b4c3d2e1f0")
HAND: Final = 1
PLAYERS: Final = (b"seat-0", b"seat-1", b"seat-2", b"seat-3")


def _hex(b: bytes | Point | Scalar) -> str:
    return (b if isinstance(b, bytes) else b.to_bytes()).hex()


def group_vector() -> Vector:
    rng_seed = b"buraco-p2p/vectors/group"
    rng = DeterministicRandomSource(rng_seed)
    stream = DeterministicRandomSource(rng_seed).bytes(160)
    scalars = [Scalar.random(rng) for _ in range(2)]
    a, b = scalars
    h2g = [(b"buraco-p2p/vectors/h2g", m) for m in (b"", b"a", b"buraco")]
    return {
        "description": "group encodings, the deterministic random source and hash-to-group "
        "(section 1.1)",
        "base_point": _hex(BASE),
        "drbg": {"seed": rng_seed.hex(), "first_160_bytes": stream.hex()},
        "scalars_from_drbg": {
            "note": "each is the next 64 bytes of the drbg stream reduced mod l",
            "a": _hex(a),
            "b": _hex(b),
            "a_plus_b": _hex(a + b),
            "a_times_b": _hex(a * b),
            "a_inverse": _hex(a.inverse()),
            "a_times_G": _hex(Point.base_mul(a)),
            "b_times_aG": _hex(b * Point.base_mul(a)),
        },
        "hash_to_group": [
            {"domain": d.hex(), "msg": m.hex(), "point": _hex(Point.hash_to_group(d, m))}
            for d, m in h2g
        ],
    }


def transcript_vector() -> Vector:
    ctx = ProofContext(table_id=TABLE_ID, hand=7, log_index=42, prover=b"seat-2")
    label = b"buraco-p2p/vectors/transcript"
    t = Transcript.for_context(label, ctx)
    p = Point.base_mul(Scalar.from_int(5))
    items: list[tuple[bytes, bytes | Point | Scalar | int | list[Point | Scalar]]] = [
        (b"point", p),
        (b"scalar", Scalar.from_int(9)),
        (b"u64", 1234567),
        (b"bytes", b"hello"),
        (b"list", [p, Scalar.from_int(1)]),
    ]
    ops: list[dict[str, object]] = []
    for item_label, value in items:
        t.append(item_label, value)
        ops.append({"op": "append", "label": item_label.hex(), "data": encode_item(value).hex()})
    c1 = t.challenge(b"c")
    ops.append({"op": "challenge", "label": b"c".hex(), "result": _hex(c1)})
    f = t.fork(b"sub")
    cf = f.challenge(b"c")
    c2 = t.challenge(b"c")
    ops.append(
        {
            "op": "fork-then-challenge",
            "label": b"sub".hex(),
            "challenge_label": b"c".hex(),
            "result": _hex(cf),
        }
    )
    ops.append({"op": "challenge", "label": b"c".hex(), "result": _hex(c2)})
    return {
        "description": "Fiat-Shamir transcript framing and challenges (section 1.2); "
        "fork-then-challenge is fork(label) then challenge(challenge_label) on the child, "
        "after which the parent goes on unchanged",
        "protocol_label": label.hex(),
        "context": _context_json(ctx),
        "operations": ops,
    }


def _context_json(ctx: ProofContext) -> dict[str, object]:
    return {
        "table_id": ctx.table_id.hex(),
        "hand": ctx.hand,
        "log_index": ctx.log_index,
        "prover": ctx.prover.hex(),
    }


def _table_keys() -> tuple[list[KeyPair], list[KeyAnnouncement], Point]:
    kps: list[KeyPair] = []
    anns: list[KeyAnnouncement] = []
    for i, prover in enumerate(PLAYERS):
        rng = DeterministicRandomSource(b"buraco-p2p/vectors/keys/" + prover)
        kp = KeyPair.generate(rng)
        ctx = ProofContext(table_id=TABLE_ID, hand=HAND, log_index=10 + i, prover=prover)
        kps.append(kp)
        anns.append(KeyAnnouncement.create(kp, ctx, rng))
    return kps, anns, aggregate_key(anns)


def keys_vector() -> Vector:
    kps, anns, table_key = _table_keys()
    return {
        "description": "per-hand keys with Schnorr proofs and the table key (section 1.3); "
        "each player's secret is its drbg's first 64 bytes reduced (retrying on zero), its "
        "proof nonce nonce(x) of section 1.2 with the next 32 bytes as rnd",
        "protocol_label": SCHNORR_LABEL.hex(),
        "players": [
            {
                "drbg_seed": (b"buraco-p2p/vectors/keys/" + a.context.prover).hex(),
                "context": _context_json(a.context),
                "secret": _hex(kp.secret),
                "public": _hex(kp.public),
                "proof": _hex(a.proof.to_bytes()),
                "announcement": _hex(a.to_bytes()),
            }
            for kp, a in zip(kps, anns, strict=True)
        ],
        "table_key": _hex(table_key),
    }


def cards_vector() -> Vector:
    return {
        "description": "card points M_c = hash_to_group(domain, ascii decimal id) (section 1.4) "
        "for ids 0..161; a deck of n cards uses ids 0..n-1. The names are section 3.1's: "
        "name_108 in a 104- or 108-card deck, name_162 in a 156- or 162-card deck",
        "domain": CARD_DOMAIN.hex(),
        "cards": [
            {
                "id": c,
                **({"name_108": card_text(c, 108)} if c < 108 else {}),
                "name_162": card_text(c, 162),
                "msg": str(c).encode().hex(),
                "point": _hex(card_point(c)),
            }
            for c in range(MAX_CARDS)
        ],
    }


def shares_vector() -> Vector:
    kps, _, table_key = _table_keys()
    rng = DeterministicRandomSource(b"buraco-p2p/vectors/shares")
    card = 77
    r = Scalar.random_nonzero(rng)
    ct = encrypt(card_point(card), r, table_key)
    share_ctxs = [
        ProofContext(table_id=TABLE_ID, hand=HAND, log_index=30 + i, prover=p)
        for i, p in enumerate(PLAYERS)
    ]
    shares = [make_share(kp, ct, c, rng) for kp, c in zip(kps, share_ctxs, strict=True)]
    for kp, s, c in zip(kps, shares, share_ctxs, strict=True):
        verify_share(kp.public, ct, s, c)
    public_open = open_card(ct, [s.share for s in shares])
    private_open = open_private(kps[0], ct, [s.share for s in shares[1:]])
    batch_cards = [3, 56, 104]
    batch_cts = [encrypt(card_point(c), Scalar.random_nonzero(rng), table_key) for c in batch_cards]
    batch_ctx = ProofContext(table_id=TABLE_ID, hand=HAND, log_index=50, prover=PLAYERS[1])
    batch = make_share_batch(kps[1], batch_cts, batch_ctx, rng)
    verify_share_batch(kps[1].public, batch_cts, batch, batch_ctx)
    return {
        "description": "decryption shares with Chaum-Pedersen proofs and opening (section 1.4); "
        "keys are those of keys.json; one drbg gives, in order: r (64 bytes, nonzero), the "
        "four proofs' nonce rnd (32 bytes each, section 1.2 nonce), the batch ciphertexts' r "
        "values (64 bytes each, nonzero), the batch proof's nonce rnd (32 bytes)",
        "drbg_seed": b"buraco-p2p/vectors/shares".hex(),
        "protocol_label": CP_LABEL.hex(),
        "table_key": _hex(table_key),
        "card": card,
        "r": _hex(r),
        "ciphertext": _hex(ct.to_bytes()),
        "shares": [
            {"context": _context_json(c), "public": _hex(kp.public), "share": _hex(s.to_bytes())}
            for kp, c, s in zip(kps, share_ctxs, shares, strict=True)
        ],
        "opened_publicly": public_open,
        "opened_privately_by_player_0": private_open,
        "batch": {
            "protocol_label": CP_BATCH_LABEL.hex(),
            "context": _context_json(batch_ctx),
            "public": _hex(kps[1].public),
            "cards": batch_cards,
            "ciphertexts": [_hex(c.to_bytes()) for c in batch_cts],
            "batch": _hex(batch.to_bytes()),
        },
    }


def randomness_vector() -> Vector:
    ctx = CoinContext(table_id=TABLE_ID, purpose=b"seats", round=0)
    nonces = [
        new_nonce(DeterministicRandomSource(b"buraco-p2p/vectors/coin/" + p)) for p in PLAYERS
    ]
    commits = [commitment(ctx, i, n) for i, n in enumerate(nonces)]
    cr = CommitReveal(ctx, len(PLAYERS))
    for i, c in enumerate(commits):
        cr.add_commitment(i, c)
    for i, n in enumerate(nonces):
        cr.add_reveal(i, n)
    seed = cr.seed()
    return {
        "description": "a commit-reveal round of 4 parties and draws from its seed (section 1.5)",
        "context": {"table_id": TABLE_ID.hex(), "purpose": ctx.purpose.hex(), "round": ctx.round},
        "nonces": [n.hex() for n in nonces],
        "commitments": [c.hex() for c in commits],
        "seed": seed.hex(),
        "draws": {
            "seat_order": {
                "label": b"seats".hex(),
                "permutation_of_4": permutation(seed, 4, label=b"seats"),
            },
            "first_dealer": {
                "label": b"dealer".hex(),
                "choice_of_4": uniform_choice(seed, 4, label=b"dealer"),
            },
            "cut": {
                "label": b"cut".hex(),
                "lo": 20,
                "hi": 88,
                "value": uniform_int(seed, 20, 88, label=b"cut"),
            },
            "permutation_of_108": {"label": b"".hex(), "value": permutation(seed, 108)},
        },
    }


def generate() -> dict[str, Vector]:
    """Every vector file's content, by file name."""
    return {
        "group.json": group_vector(),
        "transcript.json": transcript_vector(),
        "keys.json": keys_vector(),
        "cards.json": cards_vector(),
        "shares.json": shares_vector(),
        "randomness.json": randomness_vector(),
        "shuffle.json": shuffle_vector(),
        "shuffle_162.json": shuffle_162_vector(),
        "deck_2.json": deck_session_vector(2, 104, dealer=1),
        "deck_3.json": deck_session_vector(3, 108, dealer=0),
    }


def main(argv: Sequence[str] | None = None) -> int:
    return vectorfiles.main(argv, generate=generate, prog="python -m protocol.gen.crypto")


if __name__ == "__main__":
    sys.exit(main())
