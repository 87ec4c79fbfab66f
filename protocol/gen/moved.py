"""Test vectors for a host whose address changed (docs/protocol.md 2.15), written to
protocol/vectors/moved.json.

The host's signed `moved` record (its signed bytes, signature and encoding), records a joiner
refuses by closing the link they came on, and a re-join code with the inputs a client
refuses. Every key and secret comes from fixed seeds; Ed25519 signatures are deterministic, so
the file is reproduced byte for byte. A second implementation checks each with its own codec,
Ed25519 and HMAC-SHA256.

    python -m protocol.gen.moved           # check the file, exit 1 on any difference
    python -m protocol.gen.moved --write   # rewrite it
"""

from __future__ import annotations

import base64
import hashlib
import sys
from collections.abc import Sequence
from typing import Any, Final

from buraco_p2p import codec
from buraco_p2p.net.channel.identity import Identity
from buraco_p2p.net.mesh.moved import (
    Moved,
    MovedRecordError,
    make_moved,
    moved_signed_bytes,
    parse_moved,
)
from buraco_p2p.net.reach.candidates import Candidate, CandidateKind
from buraco_p2p.net.reach.invite import Endpoint
from buraco_p2p.net.reach.rejoin import RejoinCode, RejoinCodeError
from protocol.gen import files as vectorfiles

__all__ = ["FILES", "generate", "main", "moved_vector"]

FILES: Final = ("moved.json",)

Vector = vectorfiles.Vector

SEED: Final = b"buraco-p2p/vectors/moved"


def _seed(what: str) -> bytes:
    return hashlib.sha256(SEED + b"/" + what.encode()).digest()


def _candidates() -> tuple[Candidate, ...]:
    return (
        Candidate(CandidateKind.MAPPED, Endpoint.parse("203.0.113.50", 4600)),
        Candidate(CandidateKind.HOST, Endpoint.parse("2001:db8:1::2", 4600)),
    )


def _refused_records(record: list[Any], joiner: Identity) -> list[tuple[str, list[Any]]]:
    serial, addrs, sig = record[1], record[2], record[3]
    return [
        ("signed by a joiner, not the host", [*record[:3], joiner.sign(b"forged")]),
        ("the serial raised after signing", ["moved", serial + 1, addrs, sig]),
        (
            "an address changed after signing",
            ["moved", serial, [["203.0.113.66", 4600, 1], addrs[1]], sig],
        ),
        ("a kind changed after signing", ["moved", serial, [[*addrs[0][:2], 2], addrs[1]], sig]),
        ("three elements", record[:3]),
        ("serial 0", ["moved", 0, addrs, sig]),
        ("no address", ["moved", serial, [], sig]),
        ("17 addresses", ["moved", serial, [addrs[0]] * 17, sig]),
        ("kind 3", ["moved", serial, [[*addrs[0][:2], 3]], sig]),
        ("an address with a zone id", ["moved", serial, [["fe80::1%eth0", 4600, 0]], sig]),
        ("port 0", ["moved", serial, [["203.0.113.50", 0, 1]], sig]),
        (
            "an IPv4 address in its IPv6-mapped form",
            ["moved", serial, [["::ffff:203.0.113.50", 4600, 1]], sig],
        ),
        ("a signature of 63 bytes", [*record[:3], sig[:63]]),
    ]


def _code_text(binary: bytes) -> str:
    b32 = base64.b32encode(binary).decode("ascii").rstrip("=")
    return "-".join(["BRJ", *(b32[i : i + 5] for i in range(0, len(b32), 5))])


def moved_vector() -> Vector:
    host = Identity.from_seed(_seed("host"), "host")
    joiner = Identity.from_seed(_seed("joiner"), "ana")
    table_id = _seed("table")[:16]
    mesh_secret = _seed("mesh secret")[:16]
    moved = Moved(1, _candidates())
    record = make_moved(host, table_id, moved)
    signed = moved_signed_bytes(table_id, moved.serial, moved.candidates)
    refused = []
    for name, bad in _refused_records(record, joiner):
        try:
            parse_moved(bad, host.public, table_id, "the sender")
        except MovedRecordError:
            refused.append({"name": name, "encoding": codec.pack(bad).hex()})
        else:  # pragma: no cover - the generator checks its own vectors
            raise AssertionError(f"a refused moved record was accepted: {name}")

    code = RejoinCode((Candidate(CandidateKind.REFLEXIVE, Endpoint.parse("203.0.113.50", 4600)),))
    binary = code.to_bytes(mesh_secret, table_id)
    text = code.to_text(mesh_secret, table_id)
    body = binary[:-8]
    refused_codes = [
        ("keyed with another table id", _code_text(code.to_bytes(mesh_secret, bytes(16)))),
        ("keyed with another secret", _code_text(code.to_bytes(bytes(16), table_id))),
        ("a character changed", text[:-1] + ("A" if text[-1] != "A" else "B")),
        ("version 2", _code_text(bytes((2,)) + binary[1:])),
        ("a prefix other than BRJ", "BRR-" + text[4:]),
        ("a byte missing", _code_text(binary[:-1])),
        ("a byte more", _code_text(binary + b"\x00")),
        (
            "kind 3, tagged right",
            _code_text(_retag(body[:2] + bytes((0x34,)) + body[3:], mesh_secret, table_id)),
        ),
        (
            "port 0, tagged right",
            _code_text(_retag(body[:-2] + b"\x00\x00", mesh_secret, table_id)),
        ),
    ]
    for name, bad_text in refused_codes:
        try:
            RejoinCode.from_text(bad_text, mesh_secret, table_id)
        except RejoinCodeError:
            continue
        raise AssertionError(f"a refused re-join code was accepted: {name}")  # pragma: no cover
    return {
        "description": (
            "docs/protocol.md 2.15: the host's signed moved record and a re-join code. Keys are "
            'Ed25519 seeds SHA-256("buraco-p2p/vectors/moved/" || what) for what = host, '
            "joiner; table_id and mesh_secret are the first 16 bytes of the same hash for "
            '"table" and "mesh secret". Every refused record closes the link it came on; '
            "every refused code is refused with RejoinCodeError."
        ),
        "host": {"seed": _seed("host").hex(), "public": host.public.raw.hex()},
        "joiner": {"seed": _seed("joiner").hex(), "public": joiner.public.raw.hex()},
        "table_id": table_id.hex(),
        "mesh_secret": mesh_secret.hex(),
        "moved": {
            "serial": moved.serial,
            "candidates": [
                {"kind": int(c.kind), "ip": str(c.endpoint.ip), "port": c.endpoint.port}
                for c in moved.candidates
            ],
            "signed_bytes": signed.hex(),
            "signature": record[3].hex(),
            "encoding": codec.pack(record).hex(),
        },
        "refused_moved": refused,
        "rejoin": {
            "candidates": [
                {"kind": int(c.kind), "ip": str(c.endpoint.ip), "port": c.endpoint.port}
                for c in code.candidates
            ],
            "binary": binary.hex(),
            "tag": binary[-8:].hex(),
            "text": text,
            "accepted_text_forms": [text.lower(), text.replace("-", " "), text.replace("-", "")],
            "refused": [{"name": n, "text": t} for n, t in refused_codes],
        },
    }


def _retag(body: bytes, mesh_secret: bytes, table_id: bytes) -> bytes:
    import hmac

    tag = hmac.new(mesh_secret, b"buraco-p2p/rejoin/v1" + table_id + body, hashlib.sha256)
    return body + tag.digest()[:8]


def generate() -> dict[str, Vector]:
    return {"moved.json": moved_vector()}


def main(argv: Sequence[str] | None = None) -> int:
    return vectorfiles.main(argv, generate=generate, prog="python -m protocol.gen.moved")


if __name__ == "__main__":
    sys.exit(main())
