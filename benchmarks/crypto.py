"""Timings of the mental-poker crypto, printed as one JSON object.

    python benchmarks/crypto.py [--repeat N]

- shuffle_prove_ms_{52,108,162}: re-randomise and permute an encrypted deck and prove it
  (162: the six-seat deck of three packs and six jokers).
- shuffle_verify_ms_{52,108,162}: decode a received output deck and proof (every point
  checked) and verify the proof.
- share_prove_us / share_verify_us: one decryption share with its Chaum-Pedersen proof;
  share_batch_verify_us_per_share: the same for a batch of 33 (one player's part of the deal).
- setup_4p_s: one whole hand setup with four peers in this process: four key announcements,
  four shuffles each verified by the three other peers, the deal of 44 cards (every share
  batch verified by every other peer, each owner opening its 11 cards).
- setup_6p_s: the same with six peers and the 162-card deck: six shuffles each verified by
  five peers, the deal of 66 cards. Every peer's work is summed, as if on one machine.

Each figure is the median of `--repeat` runs (default 5; setup 3), in CPU time of this process
(`time.process_time`): the work is single-threaded, and CPU time does not count the time other
processes on a shared machine hold the cores.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

from buraco_p2p.crypto.deck import DeckMessage, DeckSession
from buraco_p2p.crypto.elgamal import Ciphertext, deck_bytes, open_deck
from buraco_p2p.crypto.encoding import card_points
from buraco_p2p.crypto.group import DeterministicRandomSource, Point, Scalar
from buraco_p2p.crypto.keys import KeyPair
from buraco_p2p.crypto.shares import make_share, make_share_batch, verify_share, verify_share_batch
from buraco_p2p.crypto.shuffle import decode_and_verify, generators, shuffle_and_prove, shuffle_deck
from buraco_p2p.crypto.transcript import ProofContext

CTX = ProofContext(table_id=b"bench-table-0001", hand=1, log_index=7, prover=b"bench")


def _median(f: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.process_time()
        f()
        times.append(time.process_time() - t0)
    return statistics.median(times)


def _encrypted_deck(n: int, y: Point, rng: DeterministicRandomSource) -> tuple[Ciphertext, ...]:
    deck, _ = shuffle_deck(open_deck(card_points(162)[:n]), y, rng)
    return deck


def bench_shuffle(n: int, repeat: int) -> tuple[float, float]:
    rng = DeterministicRandomSource(b"bench-shuffle")
    y = Point.base_mul(Scalar.random_nonzero(rng))
    deck = _encrypted_deck(n, y, rng)
    generators(CTX.table_id, CTX.hand, n)  # derived once per hand, not per shuffle
    out, proof = shuffle_and_prove(CTX, y, deck, rng)
    out_b, proof_b = deck_bytes(out), proof.to_bytes()
    prove = _median(lambda: shuffle_and_prove(CTX, y, deck, rng), repeat)
    verify = _median(lambda: decode_and_verify(CTX, y, deck, out_b, proof_b), repeat)
    return prove * 1e3, verify * 1e3


def bench_shares(repeat: int) -> tuple[float, float, float]:
    rng = DeterministicRandomSource(b"bench-shares")
    kp = KeyPair.generate(rng)
    y = Point.base_mul(Scalar.random_nonzero(rng))
    deck = _encrypted_deck(33, y, rng)
    k = 200
    share = make_share(kp, deck[0], CTX, rng)
    prove = _median(lambda: [make_share(kp, deck[0], CTX, rng) for _ in range(k)], repeat) / k

    def verify_many() -> None:
        for _ in range(k):
            verify_share(kp.public, deck[0], share, CTX)

    verify = _median(verify_many, repeat) / k
    batch = make_share_batch(kp, deck, CTX, rng)
    batch_verify = _median(lambda: verify_share_batch(kp.public, deck, batch, CTX), repeat) / 33
    return prove * 1e6, verify * 1e6, batch_verify * 1e6


@dataclass(frozen=True)
class _Deal:
    """Eleven cards to each of `seats` hands, dealt round the table from slot 0."""

    deck_size: int
    seats: int

    @property
    def hands(self) -> tuple[tuple[int, ...], ...]:
        return tuple(tuple(range(k, 11 * self.seats, self.seats)) for k in range(self.seats))


def run_setup(seed: bytes, seats: int = 4, deck_size: int = 108) -> list[DeckSession]:
    """A whole hand setup at `seats`; returns the sessions (each holding its 11 cards)."""
    generators.cache_clear()
    layout = _Deal(deck_size, seats)
    players = [b"p%d" % i for i in range(seats)]
    peers = [
        DeckSession(
            table_id=b"bench-table-0002",
            hand=1,
            players=players,
            me=i,
            keypair=KeyPair.generate(DeterministicRandomSource(seed + bytes([i]))),
            layout=layout,
            rng=DeterministicRandomSource(seed + bytes([i, i])),
        )
        for i in range(seats)
    ]
    log: list[DeckMessage] = []

    def post(msg: DeckMessage) -> None:
        for s in peers:
            s.receive(msg, len(log), sender=msg.seat)
        log.append(msg)

    for s in peers:
        post(s.key_message(len(log)))
    for s in peers:
        post(s.shuffle_message(len(log)))
    for s in peers:
        post(s.shares_message(len(log)))
    for s in peers:
        if len(s.known_cards()) != 11:
            raise AssertionError("a seat did not learn exactly its 11 cards")
    return peers


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    p52, v52 = bench_shuffle(52, args.repeat)
    p108, v108 = bench_shuffle(108, args.repeat)
    p162, v162 = bench_shuffle(162, args.repeat)
    sp, sv, sbv = bench_shares(args.repeat)
    counter = iter(range(1000))
    setup_repeat = max(1, args.repeat - 2)
    setup = _median(lambda: run_setup(b"bench-setup-%d" % next(counter)), setup_repeat)
    setup6 = _median(lambda: run_setup(b"bench-setup-%d" % next(counter), 6, 162), setup_repeat)
    print(
        json.dumps(
            {
                "shuffle_prove_ms_52": round(p52, 2),
                "shuffle_verify_ms_52": round(v52, 2),
                "shuffle_prove_ms_108": round(p108, 2),
                "shuffle_verify_ms_108": round(v108, 2),
                "shuffle_prove_ms_162": round(p162, 2),
                "shuffle_verify_ms_162": round(v162, 2),
                "share_prove_us": round(sp, 1),
                "share_verify_us": round(sv, 1),
                "share_batch_verify_us_per_share": round(sbv, 1),
                "setup_4p_s": round(setup, 3),
                "setup_6p_s": round(setup6, 3),
            }
        )
    )


if __name__ == "__main__":
    main()
