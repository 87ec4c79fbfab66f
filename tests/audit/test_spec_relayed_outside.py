"""docs/protocol.md 2.5 and 2.12 read from outside: the relayed invite and the relayed reply code
of protocol/vectors/candidates.json decoded to their stated fields by a reader built from the
spec's tables alone (it imports nothing of buraco_p2p)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import ipaddress
import json
from pathlib import Path

VECTOR_DIR = Path(__file__).resolve().parents[2] / "protocol" / "vectors"


def load(name: str) -> dict[str, object]:
    data: dict[str, object] = json.loads((VECTOR_DIR / name).read_text(encoding="utf-8"))
    return data


def text_form(prefix: str, data: bytes) -> str:
    raw = base64.b32encode(data).decode().rstrip("=")
    return prefix + "-".join(raw[i : i + 5] for i in range(0, len(raw), 5))


def read_text(text: str) -> bytes:
    raw = "".join(text[4:].split()).replace("-", "").upper()
    return base64.b32decode(raw + "=" * (-len(raw) % 8))


def entries(data: bytes, count: int) -> tuple[list[tuple[int, str, int]], int]:
    """`kind << 4 | family`, IP (4 or 16), port u16: the entries of 2.5 and 2.12."""
    out = []
    at = 0
    for _ in range(count):
        kind, family = data[at] >> 4, data[at] & 0x0F
        size = 4 if family == 4 else 16
        assert family in (4, 6) and kind <= 3
        ip = str(ipaddress.ip_address(data[at + 1 : at + 1 + size]))
        port = int.from_bytes(data[at + 1 + size : at + 3 + size], "big")
        assert 1 <= port <= 65535
        out.append((kind, ip, port))
        at += 3 + size
    return out, at


def test_relayed_invite() -> None:
    vector = load("candidates.json")["relayed_invite"]
    assert isinstance(vector, dict)
    data = bytes.fromhex(vector["binary"])
    assert read_text(vector["text"]) == data and text_form("BRC-", data) == vector["text"]
    assert data[0] == 1
    counts = data[65]
    nat_class, n_addr = counts >> 6, counts & 0x3F
    found, used = entries(data[66:], n_addr)
    body = data[: 66 + used]
    assert len(data) == len(body) + 4
    assert hashlib.sha256(b"buraco-p2p/invite/v1" + body).digest()[:4] == data[-4:]
    assert nat_class == vector["nat_class"] == 3  # random: not punchable
    assert [k for k, _, _ in found] == vector["kinds"]
    assert [{"ip": ip, "port": port} for _, ip, port in found] == vector["addresses"]
    assert found[-1][0] == 3, "a relayed candidate comes last (2.5)"
    invite = load("invite.json")
    assert isinstance(invite["invite"], dict)
    assert data[1:17].hex() == invite["invite"]["table_id"]


def test_relayed_reply_code() -> None:
    vector = load("candidates.json")["relayed_reply_code"]
    assert isinstance(vector, dict)
    fields = load("invite.json")["invite"]
    assert isinstance(fields, dict)
    data = bytes.fromhex(vector["binary"])
    assert read_text(vector["text"]) == data and text_form("BRR-", data) == vector["text"]
    assert data[0] == 1
    nat_class, n = data[1] >> 6, data[1] & 0x3F
    assert 1 <= n <= 4
    found, used = entries(data[2:], n)
    assert len(data) == 2 + used + 8
    key = bytes.fromhex(fields["room_secret"])
    tag = hmac.new(
        key, b"buraco-p2p/reply/v1" + bytes.fromhex(fields["table_id"]) + data[:-8], hashlib.sha256
    ).digest()[:8]
    assert hmac.compare_digest(tag, data[-8:])
    assert nat_class == vector["nat_class"] == 3
    assert [{"ip": ip, "kind": k, "port": port} for k, ip, port in found] == vector["candidates"]
    # 2.12: the reflexive address first (the IP the host permits), then the relayed one
    assert [k for k, _, _ in found] == [2, 3]
