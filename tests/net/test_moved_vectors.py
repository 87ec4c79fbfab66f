"""protocol/vectors/moved.json (docs/protocol.md 2.15), read as another client would: the
signed bytes rebuilt from the spec's words and checked with Ed25519, the re-join code's tag
with HMAC-SHA256, and every refused input refused by this client."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from buraco_p2p import codec
from buraco_p2p.net.channel.identity import PeerKey
from buraco_p2p.net.mesh.moved import MovedRecordError, parse_moved
from buraco_p2p.net.reach.rejoin import RejoinCode, RejoinCodeError

V: dict[str, Any] = json.loads(
    (Path(__file__).resolve().parents[2] / "protocol" / "vectors" / "moved.json").read_text()
)
TABLE = bytes.fromhex(V["table_id"])
SECRET = bytes.fromhex(V["mesh_secret"])
HOST = bytes.fromhex(V["host"]["public"])


def test_the_moved_record_is_signed_over_the_bytes_the_spec_names() -> None:
    m = V["moved"]
    record = codec.unpack(bytes.fromhex(m["encoding"]))
    addrs = [[c["ip"], c["port"], c["kind"]] for c in m["candidates"]]
    assert record == ["moved", m["serial"], addrs, bytes.fromhex(m["signature"])]
    signed = b"buraco-p2p/moved/v1" + TABLE + codec.pack([m["serial"], addrs])
    assert signed.hex() == m["signed_bytes"]
    Ed25519PublicKey.from_public_bytes(HOST).verify(record[3], signed)
    assert parse_moved(record, PeerKey(HOST), TABLE, "p").serial == m["serial"]


@pytest.mark.parametrize("case", V["refused_moved"], ids=lambda c: c["name"])
def test_each_refused_record_is_refused(case: dict[str, str]) -> None:
    record = codec.unpack(bytes.fromhex(case["encoding"]))
    with pytest.raises(MovedRecordError):
        parse_moved(record, PeerKey(HOST), TABLE, "the sender")


def test_the_rejoin_code_reads_back_with_its_tag() -> None:
    r = V["rejoin"]
    binary = bytes.fromhex(r["binary"])
    tag = hmac.new(SECRET, b"buraco-p2p/rejoin/v1" + TABLE + binary[:-8], hashlib.sha256)
    assert tag.digest()[:8].hex() == r["tag"] == binary[-8:].hex()
    b32 = base64.b32encode(binary).decode().rstrip("=")
    assert r["text"] == "BRJ-" + "-".join(b32[i : i + 5] for i in range(0, len(b32), 5))
    code = RejoinCode.from_text(r["text"], SECRET, TABLE)
    assert [(int(c.kind), str(c.endpoint.ip), c.endpoint.port) for c in code.candidates] == [
        (c["kind"], c["ip"], c["port"]) for c in r["candidates"]
    ]
    for form in r["accepted_text_forms"]:
        assert RejoinCode.from_text(form, SECRET, TABLE) == code
    for case in r["refused"]:
        with pytest.raises(RejoinCodeError):
            RejoinCode.from_text(case["text"], SECRET, TABLE)
