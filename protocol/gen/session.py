"""Deterministic test vectors for the table protocol, written to protocol/vectors/session.json.

A whole small match played by four in-memory session peers with every check on, from fixed
identities and seeds: the genesis' parties, every log entry's bytes, hash and step, the log
file's framing, and the engine's public state and its hash after every move (docs/protocol.md
section 4). A second implementation decodes every entry, recomputes its hash, its signature
check and the chain of step heads, and compares its own replay of each hand with the states.

    python -m protocol.gen.session           # check the file, exit 1 on any difference
    python -m protocol.gen.session --write   # rewrite it
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import random
import sys
from collections.abc import Sequence
from typing import Any, Final

import msgpack

from buraco_p2p.bots import make_bot
from buraco_p2p.crypto import DeterministicRandomSource
from buraco_p2p.engine import HandSetup, HandState, Move, move_from_wire
from buraco_p2p.engine.local import LocalTable
from buraco_p2p.logfile import encode_log, header
from buraco_p2p.net.channel.identity import Identity
from buraco_p2p.rules import get_preset
from buraco_p2p.session import Entry, LogError, Peer, Router, Table, make_entry, make_genesis
from protocol.gen import files as vectorfiles

__all__ = ["FILES", "generate", "identities", "main", "play_match", "vector_log"]

FILES: Final = (
    "session.json",
    "session_2.json",
    "session_3.json",
    "session_minutes.json",
    "session_void.json",
)
"""Four seats, then the same match at two and at three seats (each player its own side; at
three, the side change of the first pot taken), then a match of two with a time limit whose
end the round of clocks agrees, then void rounds cut into those logs and what each does
(4.5, "Abandonment")."""

Vector = vectorfiles.Vector

TABLE_ID: Final = b"vector-table-001"
PRESET: Final = "classic"
TARGET: Final = 300  # one hand reaches it: the match is one whole hand and the final round
SEED: Final = 7


def identities(n: int = 4) -> list[Identity]:
    """The parties' identities: Ed25519 seeds 0xA0.., 0xA1.., ... (32 equal bytes each)."""
    return [Identity.from_seed(bytes([0xA0 + i]) * 32, f"player{i}") for i in range(n)]


def peer_seed(seed: int, party: int) -> bytes:
    """Each party's private random stream (section 1.1's deterministic stream) seed."""
    return bytes([seed, party]) * 16


def play_match(
    preset: str = PRESET,
    *,
    seed: int = SEED,
    target: int | None = TARGET,
    table_id: bytes = TABLE_ID,
    players: int = 4,
    minutes: int = 0,
) -> list[Entry]:
    """Heuristic bots play a whole match through session peers delivering every entry to
    every peer in FIFO order; returns the log (byte-identical at every peer, checked).

    With `minutes` (a time limit), the router's clock (a thousandth of a second a delivery)
    runs through the first hand, then moves on 61 seconds a minute in the middle of the
    second, so the round of clocks after the first hand says "go on" and the one after the
    second "the time is up" (unless the lead is tied: then a hand more, and the final round)."""
    rules = get_preset(preset)
    if players != 4 or minutes:
        rules = rules.with_overrides({"players": players, "minutes": minutes})
    if target is not None:
        rules = dataclasses.replace(rules, target_score=target)
    ids = identities(players)
    genesis = make_genesis(table_id, ids, rules)
    peers = [
        Peer(genesis, ident, DeterministicRandomSource(peer_seed(seed, n)))
        for n, ident in enumerate(ids)
    ]
    bot = make_bot("heuristic")
    rng = random.Random(seed)

    def choose(party: int, view: HandState) -> Move:
        return bot.choose_move(view, rng)

    router = Router(peers, choose)
    router.start()
    first = peers[0].table
    for _ in range(1_000_000 if minutes else 0):
        if not router.queue:
            break
        router.run(1)
        hand, view = first.hand, first.view
        if hand is not None and hand.number == 1 and view is not None and len(view.moves) >= 2:
            router.advance(61.0 * minutes)  # once: the time is up in the middle of hand 1
            break
    router.run()
    logs = [[e.wire for e in p.log] for p in peers]
    if any(log != logs[0] for log in logs) or not first.closed:
        raise AssertionError("the peers did not finish the match with one log")
    return list(peers[0].log)


TIMED_MINUTES: Final = 1
TIMED_PLAYERS: Final = 2


@functools.cache
def vector_log(players: int = 4, timed: bool = False) -> tuple[Entry, ...]:
    """The log of the vectors' match at `players` seats (played once per process)."""
    if timed:
        return tuple(play_match(players=players, target=None, minutes=TIMED_MINUTES))
    return tuple(play_match(players=players))


def time_rounds(log: Sequence[Entry], n: int, minutes: int) -> list[dict[str, Any]]:
    """Each round of clocks: the hand before it, the readings by party, the verdict."""
    out = []
    clocks = [e for e in log if e.kind == "time"]
    results = [e.index for e in log if e.kind == "result"][::n]
    for k in range(0, len(clocks), n):
        rnd = clocks[k : k + n]
        ms = [int(e.body["ms"]) for e in rnd]
        hand = sum(1 for r in results if r < rnd[0].index) - 1
        up = 2 * sum(1 for x in ms if x >= minutes * 60_000) > n
        out.append({"after_hand": hand, "first_entry": rnd[0].index, "ms": ms, "up": up})
    return out


def _canonical_state(state: list[Any]) -> bytes:
    # The public state holds arrays, ints, booleans, str and bin only: msgpack's shortest
    # forms are the canonical encoding of section 2.1 for those.
    data: bytes = msgpack.packb(state, use_bin_type=True)
    return data


def _hands(log: list[Entry]) -> tuple[list[dict[str, Any]], Table]:
    """Each hand's setup, opened deck and moves, from a verifier's replay of the log, then the
    public state after every move as every player's view holds it; and the replayed table."""
    table = Table(log[0])
    hands: list[dict[str, Any]] = []
    setups: dict[int, HandSetup] = {}
    moves: dict[int, list[tuple[int, Move]]] = {}
    for entry in log[1:]:
        table.apply(entry)
        hand = table.hand
        if hand is not None and hand.view is not None:
            setups.setdefault(hand.number, hand.view.setup)
        if entry.kind == "move" and hand is not None:
            moves.setdefault(hand.number, []).append((entry.index, move_from_wire(entry.body["m"])))
    results = [e for e in log if e.kind == "result"]
    n = table.n
    for number, perm in enumerate(table.opened):
        setup = setups[number]
        local = LocalTable(setup, perm)
        states: list[dict[str, Any]] = []
        for index, move in moves[number]:
            local.push(move)
            state = local.views[0].public_state()
            if any(v.public_state() != state for v in local.views):
                raise AssertionError("the views disagree on the public state")
            data = _canonical_state(state)
            states.append({
                "entry": index,
                "move": move.to_wire(),
                "public_state": data.hex(),
                "state_hash": hashlib.sha256(data).hexdigest(),
            })  # fmt: skip
        final = bytes.fromhex(states[-1]["state_hash"])
        if any(e.body["state"] != final for e in results[number * n : number * n + n]):
            raise AssertionError("the signed results do not carry the last state's hash")
        hands.append({
            "hand": number,
            "dealer": setup.dealer,
            "cut": setup.cut,
            "team_scores_before": list(setup.team_scores),
            "opened_deck": list(perm),
            "states": states,
        })  # fmt: skip
    return hands, table


@functools.cache
def session_vector(players: int = 4, timed: bool = False) -> Vector:
    """The vector (made once per process: the match takes seconds to play with every proof)."""
    log = list(vector_log(players, timed))
    wires = [e.wire for e in log]
    heads: list[bytes] = []
    step = -1
    entries = []
    for e in log:
        if not heads or e.prev != heads[-1]:
            step += 1
            heads.append(e.prev)
        entries.append({
            "index": e.index,
            "author": e.author,
            "kind": e.kind,
            "step": step,
            "wire": e.wire.hex(),
            "hash": e.hash.hex(),
        })  # fmt: skip
    hands, replayed = _hands(log)
    terms = replayed.terms
    match = replayed.match
    assert match is not None
    file = encode_log(wires)
    if timed:
        description = (
            f"a whole match of {players} session peers (section 4) with a time limit: preset "
            f"{PRESET} with minutes {TIMED_MINUTES}, over {len(hands)} hands; after each hand "
            "a round of clocks (4.4), the last of which finds the time up"
        )
    else:
        description = (
            f"a whole match of {players} session peers (section 4): preset "
            f"{PRESET} with target_score {TARGET}"
            + (", so one hand ends it" if len(hands) == 1 else f", over {len(hands)} hands")
        )
    extra: dict[str, Any] = {}
    if timed:
        extra = {
            "minutes": TIMED_MINUTES,
            "time_rounds": time_rounds(log, players, TIMED_MINUTES),
        }
    return {
        "description": description,
        "table_id": TABLE_ID.hex(),
        "parties": [
            {
                "ed25519_seed": i.private_seed().hex(),
                "public_key": i.public.raw.hex(),
                "nickname": i.nickname,
                "fingerprint": i.public.fingerprint(),
                "drbg_seed": peer_seed(SEED, n).hex(),
            }
            for n, i in enumerate(identities(players))
        ],
        "rules_digest": terms.rules.digest().hex(),
        "seating": list(replayed.seating),
        "entries": entries,
        "step_heads": [h.hex() for h in heads],
        "file_header": header().hex(),
        "file_bytes": len(file),
        "file_sha256": hashlib.sha256(file).hexdigest(),
        "hands": hands,
        "final_scores": list(match.scores),
        "winner": match.winner,
        **extra,
    }


def _void_case(
    name: str,
    description: str,
    players: int,
    cut: int,
    signers: Sequence[int],
    silent: Sequence[int],
    action: str = "void",
    attempt: int = 0,
) -> dict[str, Any]:
    """The first `cut` entries of the `players`-seat vector log, then a void round of try
    `attempt` signed by `signers` naming `silent`; what a verifier's replay makes of it."""
    base = vector_log(players)
    table = Table(base[0])
    for e in base[1:cut]:
        table.apply(e)
    phase = table.phase.value
    prev = table.void_prev()
    ids = identities(players)
    voids = []
    body: dict[str, Any] = {"action": action, "silent": list(silent)}
    if attempt:  # try 0 is written by leaving the key out
        body["try"] = attempt
    for k, party in enumerate(signers):
        e = make_entry(
            ids[party], table=TABLE_ID, index=cut + k, prev=prev, author=party, kind="void",
            body=body,
        )  # fmt: skip
        table.apply(e)
        voids.append({"index": e.index, "author": party, "wire": e.wire.hex(),
                      "hash": e.hash.hex()})  # fmt: skip
    (rec,) = table.voids
    match = table.match
    assert match is not None
    return {
        "name": name,
        "description": description,
        "base": "session.json" if players == 4 else f"session_{players}.json",
        "base_entries": cut,
        "interrupted_phase": phase,
        "action": action,
        "silent": list(silent),
        "try": attempt,
        "void_entries": voids,
        "expect": {
            "try": rec.attempt,
            "held": list(rec.held),
            "stage": rec.stage,
            "proven": list(rec.proven),
            "charged": list(rec.charged),
            "points": rec.points,
            "then": rec.then,
            "closed": table.closed,
            "hands_scored": table.hands_played,
            "scores": list(match.scores),
            "winner": match.winner,
            "next_dealer": match.dealer,
        },
    }


def _decline_case(
    players: int, cut: int, signers: Sequence[int], silent: Sequence[int]
) -> dict[str, Any]:
    """A decline (4.5 rule 3): the void the first of `signers` signs at point `cut`, and the
    decline the second answers it with; then the round with that decline in the second's
    place, which a verifier refuses (a decline is never an entry of a round)."""
    base = vector_log(players)
    table = Table(base[0])
    for e in base[1:cut]:
        table.apply(e)
    prev = table.void_prev()
    ids = identities(players)
    body: dict[str, Any] = {"action": "void", "silent": list(silent)}
    vote = make_entry(
        ids[signers[0]], table=TABLE_ID, index=cut, prev=prev, author=signers[0], kind="void",
        body=body,
    )  # fmt: skip
    decline = make_entry(
        ids[signers[1]], table=TABLE_ID, index=cut + 1, prev=vote.hash, author=signers[1],
        kind="void", body={**body, "action": "decline"},
    )  # fmt: skip
    # the same decline with the round's `p` (as a hostile party could sign it) passes the
    # chain check and is refused for what it is
    chained = make_entry(
        ids[signers[1]], table=TABLE_ID, index=cut + 1, prev=prev, author=signers[1],
        kind="void", body={**body, "action": "decline"},
    )  # fmt: skip
    table.apply(vote)
    refused = {}
    for name, entry in (("refused_in_a_round", decline), ("refused_with_the_round_p", chained)):
        try:
            table.apply(entry)
        except LogError as exc:
            refused[name] = {"error": type(exc).__name__, "reason": exc.reason,
                             "index": exc.index, "author": exc.author}  # fmt: skip
        else:
            raise AssertionError("a decline was taken into a round")
    return {
        "base": "session.json" if players == 4 else f"session_{players}.json",
        "base_entries": cut,
        "vote": {"index": vote.index, "author": vote.author, "wire": vote.wire.hex(),
                 "hash": vote.hash.hex()},
        "decline": {"index": decline.index, "author": decline.author,
                    "wire": decline.wire.hex(), "hash": decline.hash.hex()},
        "with_the_round_p": {"wire": chained.wire.hex(), "hash": chained.hash.hex()},
        **refused,
    }  # fmt: skip


def _holder(side: list[int]) -> int:
    """The party that holds the retry case's void: party 3's partner, unless that is party 0
    (whose signature the two others need at four seats), then party 1."""
    partner = next(p for p in range(3) if side[p] == side[3])
    return partner if partner != 0 else 1


def void_vector() -> Vector:
    """Void rounds cut into the match logs above (no new play: each is the first entries of
    one of them, then void entries signed with the same identities)."""
    two, four = vector_log(2), vector_log(4)
    deal4 = next(e.index for e in four if e.kind == "deal")
    deal2 = next(e.index for e in two if e.kind == "deal")
    seating = Table(four[0])
    for e in four[1:deal4]:
        seating.apply(e)
    assert seating.match is not None
    side = [seating.match.side_of(seating.party_seat[p]) for p in range(4)]
    mine = [p for p in range(4) if side[p] == side[0]]
    others = [p for p in range(4) if side[p] != side[0]]
    cases = [
        _void_case(
            "decided", "two seats: party 1 withholds its open entry after the hand that "
            "decides the match; party 0 voids it out. The match was decided: it closes with "
            "its result (a void is never taken in the final round itself, 4.5)", 2,
            max(e.index for e in two if e.kind == "open"), [0], [1],
        ),
        _void_case(
            "abandoned_proven", "four seats: party 3 withholds its deal entry; the others, "
            "its partner among them, void it out. Its side is charged the target score and "
            "the same dealer deals again", 4, deal4 + 3, [0, 1, 2], [3],
        ),
        _void_case(
            "abandoned_unproven", "two seats: party 1 withholds its deal entry; party 0 voids "
            "it out. Nothing is proven, nobody is charged, and the match ends (no redeal)",
            2, deal2 + 1, [0], [1],
        ),
        _void_case(
            "coalition", "four seats: only party 0's deal entry is in; party 0's side names "
            "both players of the other side. Nothing is proven: nobody is charged, the match "
            "ends without a winner", 4, deal4 + 1, mine, others,
        ),
        _void_case(
            "retry", "four seats: party 3 withholds its deal entry and party "
            f"{_holder(side)} never signs the void naming it; the two others, party 0 among "
            "them, sign try 1 naming both (4.5, Retries). A partner's signature proves a "
            "named party walked out, as for any silent party", 4, deal4 + 3,
            [p for p in range(4) if p not in (3, _holder(side))], sorted([3, _holder(side)]),
            "end", 1,
        ),
    ]  # fmt: skip
    return {
        "description": (
            "void rounds (4.5): the first base_entries entries of the base vector's log, then "
            "void_entries (each body with the case's try: the key is absent for try 0); "
            "expect is what a verifier's replay finds (its try, the silent parties the "
            "interrupted step did not wait for, stage, the silent parties "
            "a partner's signature proves walked out, the match sides charged and by how much, "
            "then: next_hand, closed or decided)"
        ),
        "cases": cases,
        "decline": {
            "description": (
                "a decline (4.5 rule 3): base_entries entries of the base log, the void vote "
                "signs at that point, and the decline a party the round needs answers it "
                "with (action decline, the vote's silent, its own index in the round, and as "
                "p the vote's hash); refused_in_a_round is what a verifier says of a log "
                "whose round holds that decline after the vote (its p is no step head), and "
                "refused_with_the_round_p of one holding with_the_round_p there, the same "
                "decline signed with the round's p"
            ),
            **_decline_case(4, deal4 + 3, [0, 1, 2], [3]),
        },
    }


def generate() -> dict[str, Vector]:
    return {
        "session.json": session_vector(4),
        "session_2.json": session_vector(2),
        "session_3.json": session_vector(3),
        "session_minutes.json": session_vector(TIMED_PLAYERS, timed=True),
        "session_void.json": void_vector(),
    }


def main(argv: Sequence[str] | None = None) -> int:
    return vectorfiles.main(argv, generate=generate, prog="python -m protocol.gen.session")


if __name__ == "__main__":
    sys.exit(main())
