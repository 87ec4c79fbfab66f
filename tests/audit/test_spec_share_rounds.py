"""What each party owes in the `deal` and `end` rounds (docs/protocol.md 1.8 step 3, 4.4 steps 3
and 6), read from the session vectors with msgpack alone: the deal carries the shares of every
other seat's hand and of the face-up card, and the end round, for each party, exactly the slots
left in a hand whose share from that party the log does not hold yet."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgpack
import pytest

VECTORS = Path(__file__).resolve().parents[2] / "protocol" / "vectors"
FILES = ["session.json", "session_2.json", "session_3.json", "session_minutes.json"]
HAND = 11
POTS = {2: (11, 11), 3: (11, 18), 4: (11, 11)}  # classic at these seat counts (3.3)


def _entries(vec: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for e in vec["entries"]:
        entry = msgpack.unpackb(bytes.fromhex(e["wire"]), raw=False, strict_map_key=False)
        out.append(entry)
    return out


def _hands(entries: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """The entries of each hand, from its `keys` round to its `open` round."""
    hands: list[list[dict[str, Any]]] = []
    for e in entries:
        if e["k"] == "keys" and (not hands or hands[-1][-1]["k"] != "keys"):
            hands.append([])
        if hands and e["k"] not in ("time", "final"):
            hands[-1].append(e)
    return hands


def _slots(body: dict[str, Any]) -> list[int]:
    shares = body.get("shares")
    return [] if shares is None else list(shares["slots"])


@pytest.mark.parametrize("name", FILES)
def test_the_deal_and_end_rounds_owe_what_the_spec_says(name: str) -> None:
    vec = json.loads((VECTORS / name).read_text(encoding="utf-8"))
    n = len(vec["parties"])
    seating = vec["seating"]  # seat s is taken by party seating[s] (1.5)
    hands = _hands(_entries(vec))
    assert len(hands) == len(vec["hands"])
    d = HAND * n
    face_up = d + sum(POTS[n])  # classic turns a card face up at the deal (3.3)
    for entries, hand in zip(hands, vec["hands"], strict=True):
        dealer = hand["dealer"]
        order = [(dealer + k + 1) % n for k in range(n)]  # clockwise play (3.3)
        owner = {slot: order[slot % n] for slot in range(d)}
        deal = [e for e in entries if e["k"] == "deal"]
        assert [e["a"] for e in deal] == list(range(n))
        for e in deal:
            seat = seating.index(e["a"])
            others = [s for s in range(d) if owner[s] != seat]
            assert _slots(e["b"]) == sorted([*others, face_up])
            assert len(others) == HAND * (n - 1)
        last = msgpack.unpackb(bytes.fromhex(hand["states"][-1]["public_state"]), raw=False)
        left = sorted(s for seat_slots in last[6] for s in seat_slots)
        first_end = next(i for i, e in enumerate(entries) if e["k"] == "end")
        shared: dict[int, set[int]] = {}
        for e in entries[:first_end]:
            for slot in _slots(e["b"]):
                shared.setdefault(slot, set()).add(e["a"])
        ends = [e for e in entries if e["k"] == "end"]
        assert [e["a"] for e in ends] == list(range(n))
        for e in ends:
            owed = [s for s in left if e["a"] not in shared.get(s, set())]
            assert _slots(e["b"]) == owed, (name, e["a"])
            assert (e["b"]["shares"] is None) == (not owed)
