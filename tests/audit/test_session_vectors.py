"""docs/protocol.md section 4, read independently: protocol/vectors/session.json rechecked from the
spec text alone, with hashlib, msgpack and cryptography and nothing from buraco_p2p.

Every entry's canonical encoding, hash and Ed25519 signature; the genesis signed by every
party; indices and the chain of step heads; the log file's framing; and the public state after
every move: its hash, its layout (4.9, through `state_model`), and the last one signed by every
party in the hand's `result` entries.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from pathlib import Path
from typing import Any

import msgpack
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from state_model import check_shape, check_step

VECTORS = Path(__file__).resolve().parents[2] / "protocol" / "vectors"
SIGN_DOMAIN = b"buraco-p2p/log/v1/sign\x00"
HASH_DOMAIN = b"buraco-p2p/log/v1/entry\x00"
STEP_DOMAIN = b"buraco-p2p/log/v1/step\x00"
KEYS = {"v", "t", "i", "p", "a", "k", "b", "s"}


@pytest.fixture(
    scope="module",
    params=["session.json", "session_2.json", "session_3.json", "session_minutes.json"],
)
def vec(request: pytest.FixtureRequest) -> Any:
    """The four-seat match, then the same at two and at three seats, then a timed match."""
    return json.loads((VECTORS / request.param).read_text(encoding="utf-8"))


def canonical(value: Any) -> bytes:
    """2.1: shortest forms (msgpack-python's), map entries sorted by their key's encoding."""
    if isinstance(value, dict):
        items = sorted((canonical(k), canonical(v)) for k, v in value.items())
        n = len(items)
        head = bytes([0x80 | n]) if n < 16 else b"\xde" + n.to_bytes(2, "big")
        return head + b"".join(k + v for k, v in items)
    if isinstance(value, list):
        n = len(value)
        head = bytes([0x90 | n]) if n < 16 else (
            b"\xdc" + n.to_bytes(2, "big") if n < 1 << 16 else b"\xdd" + n.to_bytes(4, "big")
        )  # fmt: skip
        return head + b"".join(canonical(v) for v in value)
    data: bytes = msgpack.packb(value, use_bin_type=True)
    return data


def decode(wire: bytes) -> dict[str, Any]:
    entry = msgpack.unpackb(wire, raw=False, strict_map_key=False)
    assert isinstance(entry, dict) and set(entry) == KEYS
    assert canonical(entry) == wire, "not the canonical encoding"
    return entry


def test_parties_and_genesis(vec: Any) -> None:
    genesis = decode(bytes.fromhex(vec["entries"][0]["wire"]))
    assert (genesis["i"], genesis["a"], genesis["k"], genesis["p"]) == (0, 0, "genesis", bytes(32))
    assert genesis["t"].hex() == vec["table_id"] and len(genesis["t"]) == 16
    players = genesis["b"]["players"]
    assert len(players) == len(vec["parties"]) == len(genesis["s"])
    for (key, nick), party in zip(players, vec["parties"], strict=True):
        seed = bytes.fromhex(party["ed25519_seed"])
        public = Ed25519PrivateKey.from_private_bytes(seed).public_key().public_bytes_raw()
        assert key == public == bytes.fromhex(party["public_key"]) and nick == party["nickname"]
    assert hashlib.sha256(
        canonical(sorted([k, v] for k, v in genesis["b"]["rules"].items()))
    ).hexdigest() == vec["rules_digest"] == genesis["b"]["digest"].hex()
    unsigned = {k: v for k, v in genesis.items() if k != "s"}
    for (key, _), sig in zip(players, genesis["s"], strict=True):
        Ed25519PublicKey.from_public_bytes(key).verify(sig, SIGN_DOMAIN + canonical(unsigned))


def test_every_entry_hash_signature_and_step_head(vec: Any) -> None:
    entries = [bytes.fromhex(e["wire"]) for e in vec["entries"]]
    decoded = [decode(w) for w in entries]
    keys = [Ed25519PublicKey.from_public_bytes(k) for k, _ in decoded[0]["b"]["players"]]
    hashes = []
    for i, (wire, e, listed) in enumerate(zip(entries, decoded, vec["entries"], strict=True)):
        assert e["i"] == i == listed["index"] and e["v"] == 1
        assert e["t"] == decoded[0]["t"] and (e["a"], e["k"]) == (listed["author"], listed["kind"])
        digest = hashlib.sha256(HASH_DOMAIN + wire).digest()
        assert digest.hex() == listed["hash"]
        hashes.append(digest)
        if i:
            unsigned = {k: v for k, v in e.items() if k != "s"}
            keys[e["a"]].verify(e["s"], SIGN_DOMAIN + canonical(unsigned))
    # Steps: runs of entries naming the same previous head; each names the head of the last.
    steps: list[list[int]] = []
    for i, e in enumerate(decoded):
        if i and e["p"] == decoded[i - 1]["p"]:
            steps[-1].append(i)
        else:
            steps.append([i])
    for before, step in itertools.pairwise(steps):
        head = hashlib.sha256(STEP_DOMAIN + b"".join(hashes[j] for j in before)).digest()
        assert all(decoded[j]["p"] == head for j in step)
        authors = [decoded[j]["a"] for j in step]
        assert authors == sorted(set(authors)), "a round is ordered by author"
    assert [vec["entries"][s[0]]["step"] for s in steps] == list(range(len(steps)))
    assert decoded[-1]["k"] == "final"


def test_the_log_file(vec: Any) -> None:
    head = bytes.fromhex(vec["file_header"])
    assert head == b"\x92\xae" + b"buraco-p2p/log" + b"\x01"
    out = bytearray(head)
    for e in vec["entries"]:
        wire = bytes.fromhex(e["wire"])
        n = len(wire)
        prefix = b"\xc4" + n.to_bytes(1, "big") if n < 256 else (
            b"\xc5" + n.to_bytes(2, "big") if n < 65536 else b"\xc6" + n.to_bytes(4, "big")
        )  # fmt: skip
        out += prefix + wire
    assert len(out) == vec["file_bytes"]
    assert hashlib.sha256(out).hexdigest() == vec["file_sha256"]


def test_the_public_state_after_every_move(vec: Any) -> None:
    decoded = [decode(bytes.fromhex(e["wire"])) for e in vec["entries"]]
    moves = {i: e["b"]["m"] for i, e in enumerate(decoded) if e["k"] == "move"}
    results = [e for e in decoded if e["k"] == "result"]
    seats = len(vec["parties"])
    seen = []
    for hand in vec["hands"]:
        before = None
        for st in hand["states"]:
            data = bytes.fromhex(st["public_state"])
            assert hashlib.sha256(data).hexdigest() == st["state_hash"]
            state = msgpack.unpackb(data, raw=False)
            assert canonical(state) == data
            assert st["move"] == moves[st["entry"]]
            seen.append(st["entry"])
            check_shape(state, seats)
            assert state[1].hex() == vec["rules_digest"]
            assert state[2][0] == hand["dealer"] and state[2][3] == hand["hand"]
            if before is not None:
                check_step(before, st["move"], state, seats)
            before = state
        assert before is not None and before[4] == "ended"
        last = bytes.fromhex(hand["states"][-1]["state_hash"])
        signed = results[hand["hand"] * seats : (hand["hand"] + 1) * seats]
        assert [r["b"]["state"] for r in signed] == [last] * seats
        # the hand opened: the count's public cards are the opened deck's cards
        assert all(hand["opened_deck"][s] == c for s, c in before[15])
        assert sorted(hand["opened_deck"]) == list(range(len(hand["opened_deck"])))
    assert seen == sorted(moves)


def test_the_rounds_of_clocks_of_a_timed_match() -> None:
    """4.4, "A match of a fixed length in minutes": after each hand's `open` round, a `time`
    round of every party; the time is up when more than half the readings reach the limit,
    and then the `final` round follows (the lead is not tied), else the next `keys` round."""
    vec = json.loads((VECTORS / "session_minutes.json").read_text(encoding="utf-8"))
    decoded = [decode(bytes.fromhex(e["wire"])) for e in vec["entries"]]
    n = len(vec["parties"])
    assert decoded[0]["b"]["rules"]["minutes"] == vec["minutes"] > 0
    limit = vec["minutes"] * 60_000
    kinds = [e["k"] for e in decoded]
    starts = [i for i, k in enumerate(kinds) if k == "time" and kinds[i - 1] == "open"]
    assert len(starts) == len(vec["time_rounds"]) == len(vec["hands"])
    for start, rnd in zip(starts, vec["time_rounds"], strict=True):
        entries = decoded[start : start + n]
        assert [e["k"] for e in entries] == ["time"] * n
        assert [e["a"] for e in entries] == list(range(n))
        assert all(set(e["b"]) == {"ms"} for e in entries)
        ms = [e["b"]["ms"] for e in entries]
        assert ms == rnd["ms"] and rnd["first_entry"] == start
        up = 2 * sum(1 for x in ms if x >= limit) > n
        assert up == rnd["up"]
        after = [e["k"] for e in decoded[start + n : start + 2 * n]]
        assert after == (["final"] * n if up else ["keys"] * n)
    assert vec["time_rounds"][-1]["up"] and not any(r["up"] for r in vec["time_rounds"][:-1])
