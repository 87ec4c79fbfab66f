"""Test vectors for what is evidence of equivocation (docs/protocol.md 4.1 and 4.6), written to
protocol/vectors/evidence.json.

Pairs of signed entries built on the match of protocol/vectors/session.json: for each, the
author's key in force at the index and whether the pair proves that the author equivocated
(two different entries for one index of one log, both signed under that key). A second
implementation checks each verdict with its own decoding and Ed25519.

    python -m protocol.gen.evidence           # check the file, exit 1 on any difference
    python -m protocol.gen.evidence --write   # rewrite it
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any, Final

from buraco_p2p.net.channel.identity import Identity
from buraco_p2p.session import Entry, make_entry
from buraco_p2p.session.evidence import proves_equivocation
from protocol.gen import files as vectorfiles
from protocol.gen.session import identities, vector_log

__all__ = ["FILES", "generate", "main"]

FILES: Final = ("evidence.json",)

Vector = vectorfiles.Vector

PROPOSED_SEED: Final = b"\xb0" * 32  # a key a "replace" proposal names, never seated


def _variant(e: Entry, signer: Identity, **changes: Any) -> Entry:
    fields: dict[str, Any] = {
        "table": e.table, "index": e.index, "prev": e.prev, "author": e.author,
        "kind": e.kind, "body": dict(e.body),
    }  # fmt: skip
    fields.update(changes)
    return make_entry(signer, **fields)


def evidence_vector() -> Vector:
    log = vector_log(4)
    ids = identities(4)
    move = next(e for e in log if e.kind == "move")
    other = next(e for e in log if e.kind == "move" and e.body["m"] != move.body["m"])
    author = ids[move.author]
    proposed = Identity.from_seed(PROPOSED_SEED, "proposed")
    void_body = {"action": "end", "silent": [(move.author + 1) % 4]}
    retry_body = {"action": "end", "silent": sorted([(move.author + 1) % 4, (move.author + 2) % 4])}
    cases = [
        ("two different moves for one index, the same p, both signed by the author",
         move, _variant(move, author, body=dict(other.body))),
        ("the same index and author, another p: the second does not continue this log",
         move, _variant(move, author, prev=bytes(32))),
        ("the second signed by a key a replace proposal names, not the key in force",
         move, _variant(move, proposed, body=dict(other.body))),
        ("a void and an entry of another kind at one index",
         move, _variant(move, author, kind="void", body=void_body)),
        ("one entry twice", move, move),
        ("two voids of one author at one index, try 0 and try 1 (a retry, 4.5): two votes",
         _variant(move, author, kind="void", body=void_body),
         _variant(move, author, kind="void", body=dict(retry_body, **{"try": 1}))),
        ("two voids of one author at one index and one try that differ",
         _variant(move, author, kind="void", body=dict(retry_body, **{"try": 1})),
         _variant(move, author, kind="void", body={**void_body, "try": 1})),
    ]  # fmt: skip
    key = ids[move.author].public
    out = []
    for why, a, b in cases:
        out.append({
            "why": why,
            "index": a.index,
            "author": a.author,
            "key_in_force": key.raw.hex(),
            "first": a.wire.hex(),
            "second": b.wire.hex(),
            "equivocation": proves_equivocation(a, b, key),
        })  # fmt: skip
    verdicts = [c["equivocation"] for c in out]
    if verdicts != [True, False, False, False, False, False, True]:  # pragma: no cover
        raise AssertionError(f"unexpected verdicts {verdicts}")
    return {
        "description": (
            "pairs of signed entries of the session.json table (docs/protocol.md 4.6): whether "
            "each proves that its author equivocated, under the author's key in force"
        ),
        "table_id": move.table.hex(),
        "cases": out,
    }


def generate() -> dict[str, Vector]:
    return {"evidence.json": evidence_vector()}


def main(argv: Sequence[str] | None = None) -> int:
    return vectorfiles.main(argv, generate=generate, prog="python -m protocol.gen.evidence")


if __name__ == "__main__":
    sys.exit(main())
