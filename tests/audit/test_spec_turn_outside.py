"""docs/protocol.md 2.14 read from outside: a TURN reader and writer built from the spec's text
(and RFC 8489/8656/6062 where the spec names them) alone, which must parse every message of
protocol/vectors/candidates.json's `turn` and rebuild it byte for byte. It imports nothing of
buraco_p2p, so a sentence the spec leaves out shows here as a vector it cannot rebuild."""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
import struct
from dataclasses import dataclass
from pathlib import Path

import pytest

VECTORS = Path(__file__).resolve().parents[2] / "protocol" / "vectors" / "candidates.json"
COOKIE = 0x2112A442

# 2.14: attribute types
XOR_MAPPED_ADDRESS = 0x0020
XOR_PEER_ADDRESS = 0x0012
XOR_RELAYED_ADDRESS = 0x0016
REQUESTED_TRANSPORT = 0x0019
LIFETIME = 0x000D
CONNECTION_ID = 0x002A
USERNAME = 0x0006
REALM = 0x0014
NONCE = 0x0015
MESSAGE_INTEGRITY = 0x0008
ERROR_CODE = 0x0009
FINGERPRINT = 0x8028

# 2.14: methods and classes
ALLOCATE, REFRESH, CREATE_PERMISSION, CONNECTION_BIND, CONNECTION_ATTEMPT = 3, 4, 8, 11, 12
REQUEST, INDICATION, SUCCESS, ERROR = 0x000, 0x010, 0x100, 0x110

# 2.14 "Test vectors": each message's transaction id is SHA-256(prefix || name)[:12]
TRANSACTION_NAMES = {
    "allocate_first": "allocate-1",
    "allocate_challenge": "allocate-1",
    "allocate": "allocate-2",
    "allocate_success": "allocate-2",
    "create_permission": "permission",
    "refresh": "refresh",
    "release": "release",
    "connection_attempt": "attempt",
    "connection_bind": "bind",
    "create_permission_two": "permission-2",
    "allocate_success_v6": "allocate-2-v6",
    "create_permission_v6": "permission-v6",
    "connection_attempt_v6": "attempt-v6",
}


def message_type(method: int, cls: int) -> int:
    """Method bits 0-3, 5-7 and 9-13; class bits 4 and 8 (2.14)."""
    return (method & 0x000F) | ((method & 0x0070) << 1) | ((method & 0x0F80) << 2) | cls


def split_type(value: int) -> tuple[int, int]:
    method = (value & 0x000F) | ((value >> 1) & 0x0070) | ((value >> 2) & 0x0F80)
    return method, value & 0x0110


@dataclass(frozen=True)
class Message:
    method: int
    cls: int
    transaction: bytes
    attributes: tuple[tuple[int, bytes], ...]

    def get(self, kind: int) -> bytes:
        values = [v for k, v in self.attributes if k == kind]
        assert len(values) == 1, f"attribute {kind:#06x} appears {len(values)} times"
        return values[0]


def parse(data: bytes) -> Message:
    """2.11's STUN framing: 20-byte header, then attributes padded to 4 (with zero bytes)."""
    assert len(data) <= 2048
    kind, length, cookie = struct.unpack(">HHI", data[:8])
    assert kind & 0xC000 == 0
    assert cookie == COOKIE and length % 4 == 0 and length == len(data) - 20
    attributes = []
    at = 20
    while at < len(data):
        a_type, a_len = struct.unpack(">HH", data[at : at + 4])
        value = data[at + 4 : at + 4 + a_len]
        assert len(value) == a_len
        pad = -a_len % 4
        # every vector is what a sender writes: its padding is zero bytes
        assert data[at + 4 + a_len : at + 4 + a_len + pad] == bytes(pad)
        attributes.append((a_type, value))
        at += 4 + a_len + pad
    assert at == len(data)
    method, cls = split_type(kind)
    return Message(method, cls, data[8:20], tuple(attributes))


def long_term_key(user: str, realm: str, password: str) -> bytes:
    return hashlib.md5(f"{user}:{realm}:{password}".encode()).digest()


def build(msg: Message, key: bytes | None) -> bytes:
    """Attributes in the order given; with a key, MESSAGE-INTEGRITY last, over the message up to
    it with the header's length already counting its 24 bytes (RFC 8489 section 14.5)."""
    body = b""
    for a_type, value in msg.attributes:
        if a_type == MESSAGE_INTEGRITY:
            continue
        body += struct.pack(">HH", a_type, len(value)) + value + bytes(-len(value) % 4)
    head = struct.pack(">HHI", message_type(msg.method, msg.cls), 0, COOKIE) + msg.transaction
    if key is None:
        return head[:2] + struct.pack(">H", len(body)) + head[4:] + body
    head = head[:2] + struct.pack(">H", len(body) + 24) + head[4:]
    mac = hmac.new(key, head + body, hashlib.sha1).digest()
    return head + body + struct.pack(">HH", MESSAGE_INTEGRITY, 20) + mac


def integrity_holds(data: bytes, key: bytes) -> bool:
    """MESSAGE-INTEGRITY over the bytes before it, the header's length ending just after it."""
    at = 20
    while at < len(data):
        a_type, a_len = struct.unpack(">HH", data[at : at + 4])
        if a_type == MESSAGE_INTEGRITY:
            head = data[:2] + struct.pack(">H", at + 24 - 20) + data[4:20]
            mac = hmac.new(key, head + data[20:at], hashlib.sha1).digest()
            return hmac.compare_digest(mac, data[at + 4 : at + 24])
        at += 4 + a_len + (-a_len % 4)
    return False


def xor_address(value: bytes, transaction: bytes) -> tuple[str, int]:
    """2.11: reserved u8, family u8, port XOR 0x2112, address XOR cookie (|| transaction id)."""
    assert value[0] == 0
    family = value[1]
    port = struct.unpack(">H", value[2:4])[0] ^ 0x2112
    mask = struct.pack(">I", COOKIE) + (transaction if family == 2 else b"")
    assert (family, len(value)) in ((1, 8), (2, 20))
    raw = bytes(a ^ b for a, b in zip(value[4:], mask, strict=True))
    return str(ipaddress.ip_address(raw)), port


def xor_value(ip: str, port: int, transaction: bytes) -> bytes:
    address = ipaddress.ip_address(ip)
    family = 1 if address.version == 4 else 2
    mask = struct.pack(">I", COOKIE) + (transaction if family == 2 else b"")
    raw = bytes(a ^ b for a, b in zip(address.packed, mask, strict=True))
    return struct.pack(">BBH", 0, family, port ^ 0x2112) + raw


def host_port(text: str) -> tuple[str, int]:
    ip, _, port = text.rpartition(":")
    return ip.strip("[]"), int(port)


@pytest.fixture(scope="module")
def turn() -> dict[str, object]:
    vectors = json.loads(VECTORS.read_text(encoding="utf-8"))
    table: dict[str, object] = vectors["turn"]
    return table


def binary(turn: dict[str, object], name: str) -> bytes:
    entry = turn[name]
    text = entry["binary"] if isinstance(entry, dict) else entry
    assert isinstance(text, str)
    return bytes.fromhex(text)


def tid(name: str) -> bytes:
    label = TRANSACTION_NAMES[name].encode()
    return hashlib.sha256(b"buraco-p2p/vectors/turn/" + label).digest()[:12]


def credentials(turn: dict[str, object]) -> list[tuple[int, bytes]]:
    """USERNAME, REALM, NONCE in that order, before MESSAGE-INTEGRITY (2.14 step 1)."""
    return [
        (USERNAME, str(turn["user"]).encode()),
        (REALM, str(turn["realm"]).encode()),
        (NONCE, str(turn["nonce"]).encode()),
    ]


def test_long_term_key(turn: dict[str, object]) -> None:
    key = long_term_key(str(turn["user"]), str(turn["realm"]), str(turn["password"]))
    assert key.hex() == turn["key"]


def test_every_message_parses_with_the_named_transaction_id(turn: dict[str, object]) -> None:
    assert turn["transaction_names"] == TRANSACTION_NAMES
    for name in TRANSACTION_NAMES:
        assert parse(binary(turn, name)).transaction == tid(name), name


def test_first_allocate_and_its_challenge(turn: dict[str, object]) -> None:
    first = Message(
        ALLOCATE,
        REQUEST,
        tid("allocate_first"),
        ((REQUESTED_TRANSPORT, bytes([6, 0, 0, 0])), (LIFETIME, struct.pack(">I", 600))),
    )
    assert build(first, None) == binary(turn, "allocate_first")
    challenge = parse(binary(turn, "allocate_challenge"))
    assert (challenge.method, challenge.cls) == (ALLOCATE, ERROR)
    code = challenge.get(ERROR_CODE)
    assert code[:2] == b"\0\0" and code[2] * 100 + code[3] == 401
    assert challenge.get(REALM).decode() == turn["realm"]
    assert challenge.get(NONCE).decode() == turn["nonce"]
    rebuilt = Message(
        ALLOCATE,
        ERROR,
        tid("allocate_challenge"),
        ((ERROR_CODE, code), (REALM, challenge.get(REALM)), (NONCE, challenge.get(NONCE))),
    )
    assert build(rebuilt, None) == binary(turn, "allocate_challenge")


def test_authenticated_requests_rebuild_byte_for_byte(turn: dict[str, object]) -> None:
    key = bytes.fromhex(str(turn["key"]))
    lifetime = (LIFETIME, struct.pack(">I", 600))
    permission = turn["create_permission"]
    assert isinstance(permission, dict)
    peer = (XOR_PEER_ADDRESS, xor_value(permission["peer_ip"], 1, tid("create_permission")))
    attempt = parse(binary(turn, "connection_attempt"))
    expected = {
        "allocate": (ALLOCATE, [(REQUESTED_TRANSPORT, bytes([6, 0, 0, 0])), lifetime]),
        "create_permission": (CREATE_PERMISSION, [peer]),
        "refresh": (REFRESH, [lifetime]),
        "release": (REFRESH, [(LIFETIME, bytes(4))]),
        "connection_bind": (CONNECTION_BIND, [(CONNECTION_ID, attempt.get(CONNECTION_ID))]),
    }
    for name, (method, own) in expected.items():
        msg = Message(method, REQUEST, tid(name), (*own, *credentials(turn)))
        assert build(msg, key) == binary(turn, name), name
        assert integrity_holds(binary(turn, name), key), name


def test_permissions_for_two_ips_and_for_ipv6(turn: dict[str, object]) -> None:
    key = bytes.fromhex(str(turn["key"]))
    two = turn["create_permission_two"]
    assert isinstance(two, dict)
    ips = sorted(two["peer_ips"])  # ascending text order, one attribute each, one request
    name = "create_permission_two"
    own = [(XOR_PEER_ADDRESS, xor_value(ip, 1, tid(name))) for ip in ips]
    msg = Message(CREATE_PERMISSION, REQUEST, tid(name), (*own, *credentials(turn)))
    assert build(msg, key) == binary(turn, name)
    six = turn["create_permission_v6"]
    assert isinstance(six, dict)
    name = "create_permission_v6"
    own = [(XOR_PEER_ADDRESS, xor_value(six["peer_ip"], 1, tid(name)))]
    msg = Message(CREATE_PERMISSION, REQUEST, tid(name), (*own, *credentials(turn)))
    assert build(msg, key) == binary(turn, name)


def test_ipv6_allocation_and_attempt(turn: dict[str, object]) -> None:
    key = bytes.fromhex(str(turn["key"]))
    data = binary(turn, "allocate_success_v6")
    msg = parse(data)
    assert integrity_holds(data, key)
    entry = turn["allocate_success_v6"]
    assert isinstance(entry, dict)
    assert xor_address(msg.get(XOR_RELAYED_ADDRESS), msg.transaction) == host_port(entry["relayed"])
    assert xor_address(msg.get(XOR_MAPPED_ADDRESS), msg.transaction) == host_port(entry["mapped"])
    assert build(msg, key) == data
    data = binary(turn, "connection_attempt_v6")
    msg = parse(data)
    entry = turn["connection_attempt_v6"]
    assert isinstance(entry, dict)
    assert xor_address(msg.get(XOR_PEER_ADDRESS), msg.transaction) == host_port(entry["peer"])
    assert build(msg, None) == data


def test_allocate_success(turn: dict[str, object]) -> None:
    key = bytes.fromhex(str(turn["key"]))
    data = binary(turn, "allocate_success")
    msg = parse(data)
    assert (msg.method, msg.cls) == (ALLOCATE, SUCCESS)
    assert integrity_holds(data, key)
    assert not integrity_holds(data, long_term_key("ana", "buraco.example", "wrong"))
    entry = turn["allocate_success"]
    assert isinstance(entry, dict)
    assert xor_address(msg.get(XOR_RELAYED_ADDRESS), msg.transaction) == host_port(entry["relayed"])
    assert xor_address(msg.get(XOR_MAPPED_ADDRESS), msg.transaction) == host_port(entry["mapped"])
    assert struct.unpack(">I", msg.get(LIFETIME))[0] == entry["lifetime"]
    assert msg.attributes[-1][0] == MESSAGE_INTEGRITY
    assert FINGERPRINT not in [k for k, _ in msg.attributes]
    assert build(msg, key) == data


def test_connection_attempt(turn: dict[str, object]) -> None:
    data = binary(turn, "connection_attempt")
    msg = parse(data)
    assert (msg.method, msg.cls) == (CONNECTION_ATTEMPT, INDICATION)
    entry = turn["connection_attempt"]
    assert isinstance(entry, dict)
    assert msg.get(CONNECTION_ID).hex() == entry["connection_id"]
    assert xor_address(msg.get(XOR_PEER_ADDRESS), msg.transaction) == host_port(entry["peer"])
    assert MESSAGE_INTEGRITY not in [k for k, _ in msg.attributes]  # an indication is not signed
    assert build(msg, None) == data


def test_xor_addresses_both_families() -> None:
    transaction = bytes(range(12))
    for ip, port in (("198.51.100.4", 49200), ("2001:db8::4", 49200), ("2001:db8::7", 1)):
        assert xor_address(xor_value(ip, port, transaction), transaction) == (ip, port)
