"""protocol/vectors/session_void.json read back: each case's log (the first entries of a match
vector, then its void round) replays to what the case expects, and `verify` says the same."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgpack
import pytest

from buraco_p2p.audit import EXIT_FAIR, EXIT_UNFINISHED, render_text, verify_bytes
from buraco_p2p.logfile import encode_log
from buraco_p2p.session import replay

VECTORS = Path(__file__).resolve().parents[2] / "protocol" / "vectors"
CASES = json.loads((VECTORS / "session_void.json").read_text(encoding="utf-8"))["cases"]


def _log(case: dict[str, Any]) -> list[bytes]:
    base = json.loads((VECTORS / case["base"]).read_text(encoding="utf-8"))["entries"]
    head = [bytes.fromhex(e["wire"]) for e in base[: case["base_entries"]]]
    return head + [bytes.fromhex(v["wire"]) for v in case["void_entries"]]


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_a_void_vector_replays_to_what_it_expects(case: dict[str, Any]) -> None:
    wires = _log(case)
    rep = replay(wires)
    expect = case["expect"]
    (rec,) = rep.table.voids
    got = {
        "try": rec.attempt, "held": list(rec.held), "stage": rec.stage,
        "proven": list(rec.proven), "charged": list(rec.charged),
        "points": rec.points, "then": rec.then, "closed": rep.closed,
        "hands_scored": rep.hands, "scores": list(rep.scores), "winner": rep.winner,
        "next_dealer": rep.table.match.dealer if rep.table.match is not None else None,
    }  # fmt: skip
    assert got == expect
    v = verify_bytes(encode_log(wires))
    assert v.code == (EXIT_FAIR if expect["closed"] else EXIT_UNFINISHED)
    assert v.doc["voids"][0]["silent"] == case["silent"]
    assert v.doc["voids"][0]["try"] == case["try"] == expect["try"]
    assert v.doc["voids"][0]["held"] == expect["held"]
    for e in case["void_entries"]:  # try 0 is the absent key: one encoding per void
        body = msgpack.unpackb(bytes.fromhex(e["wire"]), raw=False)["b"]
        assert body.get("try", 0) == case["try"] and body.get("try") != 0


def test_verify_tells_a_retry() -> None:
    """The summary says the round's try and which silent parties were named for not
    signing the try before."""
    (case,) = [c for c in CASES if c["name"] == "retry"]
    v = verify_bytes(encode_log(_log(case)))
    line = next(x for x in render_text(v.doc).splitlines() if "void at entry" in x)
    held = case["expect"]["held"][0]
    assert "try 1" in line and f"that {held} did not sign the void's earlier tries" in line


def test_a_log_that_stops_inside_a_void_round_is_unfinished() -> None:
    """Half a void round: nobody is named as bad; the summary says the log stops in a void
    round and who would sign next."""
    (case,) = [c for c in CASES if c["name"] == "abandoned_proven"]
    wires = _log(case)[:-1]
    v = verify_bytes(encode_log(wires))
    assert v.code == EXIT_UNFINISHED and v.doc["result"] == "unfinished"
    last = case["void_entries"][-1]
    assert v.doc["ending"] == {"how": "unfinished", "phase": "void",
                               "waiting_for": [last["author"]]}  # fmt: skip
