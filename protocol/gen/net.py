"""Deterministic test vectors for the network layer, written to protocol/vectors/*.json.

A second implementation of docs/protocol.md section 2 checks itself against these files: the
codec's canonical bytes and its refusals (2.1), a whole handshake with every intermediate value
(2.2, 2.3), sealed frames in both directions and frames that must be refused (2.4), and an
invite code in its binary and text forms (2.5). Every input comes from fixed seeds, so
regenerating gives the same bytes; the wire bytes and keys come from the package's own code,
and the intermediate values the package keeps to itself are recomputed here and checked
against them before anything is written.

    python -m protocol.gen.net           # check the files, exit 1 on any difference
    python -m protocol.gen.net --write   # rewrite them
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import ipaddress
import struct
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from buraco_p2p import codec
from buraco_p2p.crypto.group import DeterministicRandomSource
from buraco_p2p.net.channel import edwards
from buraco_p2p.net.channel.framing import (
    DEFAULT_MAX_FRAME,
    HEADER_LEN,
    KIND_CLOSE,
    KIND_DATA,
    KIND_READY,
    Frame,
    FrameReader,
    SendCipher,
    frame_header,
)
from buraco_p2p.net.channel.handshake import (
    HINT_LEN,
    HS_KEYS_INFO,
    PROLOGUE_LABEL,
    SECRET_HINT_LABEL,
    TRAFFIC_KEYS_INFO,
    HandshakeResult,
    InitiatorHandshake,
    ResponderHandshake,
    version_alert,
)
from buraco_p2p.net.channel.identity import Identity, PeerKey
from buraco_p2p.net.channel.reliable import Ack, Data, Resume
from buraco_p2p.net.mesh.punching import punch_message
from buraco_p2p.net.mesh.relay import RelayRecord
from buraco_p2p.net.reach.candidates import CandidateKind
from buraco_p2p.net.reach.invite import Endpoint, Invite, InviteChecksumError
from buraco_p2p.net.table.table import (
    KICKED,
    LEAVE,
    Departure,
    Member,
    Roster,
    join_message,
    mesh_message,
    refused_message,
    roster_message,
    succession,
    welcome_message,
)
from protocol.gen import files as vectorfiles

__all__ = [
    "FILES",
    "candidates_vector",
    "codec_vector",
    "expand_pieces",
    "frames_vector",
    "generate",
    "handshake_vector",
    "identity_keys_vector",
    "invite_vector",
    "main",
    "mesh_vector",
    "shortcode_vector",
    "typed",
    "untyped",
]

FILES: Final = (
    "codec.json",
    "handshake.json",
    "frames.json",
    "invite.json",
    "identity_keys.json",
    "mesh.json",
    "candidates.json",
    "shortcode.json",
)

Vector = vectorfiles.Vector

HANDSHAKE_SEED: Final = b"buraco-p2p/vectors/handshake"
INITIATOR_NICK: Final = "Jo\u00e3o"  # 4 code points, 5 UTF-8 bytes: lengths are in bytes
RESPONDER_NICK: Final = "Bia"

_KIND_NAMES: Final = {KIND_READY: "READY", KIND_DATA: "DATA", KIND_CLOSE: "CLOSE"}


# --- the typed value notation (JSON cannot tell str from bin, nor hold every 64-bit int) -----


def typed(value: Any) -> object:
    """`value` in the vector files' notation: one-key objects naming the codec type.

    Ints are decimal strings so that readers whose JSON numbers are doubles lose nothing; a map
    is a list of [key, value] pairs in the order given to the encoder (not necessarily the
    canonical order, which is the encoder's job).
    """
    if value is None:
        return {"nil": None}
    if isinstance(value, bool):
        return {"bool": value}
    if isinstance(value, int):
        return {"int": str(value)}
    if isinstance(value, str):
        return {"str": value}
    if isinstance(value, bytes):
        return {"bin": value.hex()}
    if isinstance(value, list | tuple):
        return {"array": [typed(item) for item in value]}
    if isinstance(value, Mapping):
        return {"map": [[typed(k), typed(v)] for k, v in value.items()]}
    raise TypeError(f"no vector notation for {type(value).__name__}")


def untyped(node: Any) -> Any:
    """The Python value of a `typed` node (maps become dicts, keeping the listed order)."""
    if not isinstance(node, dict) or len(node) != 1:
        raise ValueError(f"not a typed value: {node!r}")
    ((kind, content),) = node.items()
    if kind == "nil":
        return None
    if kind == "bool":
        return bool(content)
    if kind == "int":
        return int(content)
    if kind == "str":
        return str(content)
    if kind == "bin":
        return bytes.fromhex(content)
    if kind == "array":
        return [untyped(item) for item in content]
    if kind == "map":
        return {untyped(k): untyped(v) for k, v in content}
    raise ValueError(f"unknown type {kind!r} in a typed value")


# --- 2.1 codec ------------------------------------------------------------------------------


def _nested_arrays(depth: int) -> Any:
    """`depth - 1` arrays around the int 0: a value of exactly `depth` levels."""
    value: Any = 0
    for _ in range(depth - 1):
        value = [value]
    return value


def _canonical_values() -> list[tuple[str, Any]]:
    ints = [
        0, 1, 127, 128, 255, 256, 65535, 65536, 2**32 - 1, 2**32, 2**64 - 1,
        -1, -32, -33, -128, -129, -32768, -32769, -(2**31), -(2**31) - 1, -(2**63),
    ]  # fmt: skip
    values: list[tuple[str, Any]] = [
        ("nil", None),
        ("true", True),
        ("false", False),
    ]
    values += [(f"int {n}", n) for n in ints]
    values += [
        ("empty str", ""),
        ("ascii str", "buraco"),
        ("utf-8 str (byte length, not code points)", "ol\u00e1, Jo\u00e3o!"),
        ("str of 31 bytes (largest fixstr)", "x" * 31),
        ("str of 32 bytes (str8)", "x" * 32),
        ("str of 256 bytes (str16)", "y" * 256),
        ("empty bin", b""),
        ("bin", bytes([0, 1, 0xFF])),
        ("bin of 256 bytes (bin16)", bytes(range(256))),
        ("empty array", []),
        ("mixed array", [1, "a", None, b"\x00", False]),
        ("array of 15 (largest fixarray)", list(range(15))),
        ("array of 16 (array16)", list(range(16))),
        ("nested arrays", [[], [[]], [1, [2, [3]]]]),
        ("depth 32 (the limit)", _nested_arrays(32)),
        ("empty map", {}),
        ("map given out of order", {"b": 1, "a": 2}),
        (
            "map keys sorted by their encoding, not by value or text",
            {"b": 0, -1: 0, "aa": 0, 200: 0, "": 0, 1: 0, "a": 0},
        ),
        ("map of 16 entries (map16)", {f"k{i:02d}": i for i in range(15, -1, -1)}),
        (
            "a join request (section 2.6)",
            ["join", {"addrs": [["192.0.2.10", 40404], ["2001:db8::1", 40404]]}],
        ),
        (
            "nested map with bin values",
            {"table": bytes(range(16)), "version": 3, "members": [{"seat": 0, "nick": "Bia"}]},
        ),
    ]
    return values


@dataclass(frozen=True)
class _Refusal:
    name: str
    data: bytes
    reason: str
    lenient_value: Any = None
    canonical_only: bool = False


def _noncanonical(name: str, hexdata: str, reason: str, value: Any) -> _Refusal:
    return _Refusal(name, bytes.fromhex(hexdata), reason, value, canonical_only=True)


def _refused(name: str, hexdata: str, reason: str) -> _Refusal:
    return _Refusal(name, bytes.fromhex(hexdata), reason)


def _refusals() -> list[_Refusal]:
    return [
        _noncanonical("1 as uint8", "cc01", "non_canonical_int", 1),
        _noncanonical("200 as uint16", "cd00c8", "non_canonical_int", 200),
        _noncanonical("127 as uint16", "cd007f", "non_canonical_int", 127),
        _noncanonical(
            "5 as int8 (signed form of a non-negative int)", "d005", "non_canonical_int", 5
        ),
        _noncanonical("1 as int64", "d30000000000000001", "non_canonical_int", 1),
        _noncanonical("-1 as int8", "d0ff", "non_canonical_int", -1),
        _noncanonical("-100 as int16", "d1ff9c", "non_canonical_int", -100),
        _noncanonical("empty str as str8", "d900", "non_canonical_str", ""),
        _noncanonical("'a' as str8", "d90161", "non_canonical_str", "a"),
        _noncanonical("'a' as str16", "da000161", "non_canonical_str", "a"),
        _noncanonical("one-byte bin as bin16", "c5000100", "non_canonical_bin", b"\x00"),
        _noncanonical("one-byte bin as bin32", "c60000000100", "non_canonical_bin", b"\x00"),
        _noncanonical("[1] as array16", "dc000101", "non_canonical_array", [1]),
        _noncanonical("{'a': 1} as map16", "de0001a16101", "non_canonical_map", {"a": 1}),
        _noncanonical(
            "map keys 'b' before 'a'", "82a16201a16102", "unsorted_map_keys", {"b": 1, "a": 2}
        ),
        _noncanonical(
            "map keys in numeric order (-1 before 1)",
            "82ff000100",
            "unsorted_map_keys",
            {-1: 0, 1: 0},
        ),
        _noncanonical(
            "map keys in text order ('aa' before 'b')",
            "82a2616100a16200",
            "unsorted_map_keys",
            {"aa": 0, "b": 0},
        ),
        _refused("float32", "ca3f800000", "float"),
        _refused("float64", "cb3ff0000000000000", "float"),
        _refused("float inside an array", "9201cb0000000000000000", "float"),
        _refused("float as a map value", "81a178ca00000000", "float"),
        _refused("fixext1", "d40100", "ext"),
        _refused("fixext16", "d801" + "00" * 16, "ext"),
        _refused("timestamp (ext -1)", "d6ff00000000", "ext"),
        _refused("ext8 of length 0", "c70005", "ext"),
        _refused("ext8 inside an array", "91c7010700", "ext"),
        _refused("duplicate str key", "82a16101a16102", "duplicate_key"),
        _refused("duplicate int key", "820700070a", "duplicate_key"),
        _refused("bool map key", "81c301", "bad_map_key"),
        _refused("nil map key", "81c001", "bad_map_key"),
        _refused("bin map key", "81c4010001", "bad_map_key"),
        _refused("array map key", "819001", "bad_map_key"),
        _refused("map map key", "818001", "bad_map_key"),
        _refused("str that is not UTF-8", "a1ff", "invalid_utf8"),
        _refused("str holding a UTF-16 surrogate", "a3eda080", "invalid_utf8"),
        _refused("trailing bytes", "0102", "trailing_bytes"),
        _refused("two values", "90c0", "trailing_bytes"),
        _refused("empty input", "", "empty"),
        _refused("str cut short", "a56162", "truncated"),
        _refused("array missing elements", "930102", "truncated"),
        _refused("uint32 cut short", "ce0001", "truncated"),
        _refused("reserved type byte 0xc1", "c1", "reserved_byte"),
        _refused("str32 declaring 2^32-1 bytes", "dbffffffff61", "length_over_limit"),
        _refused("bin32 declaring 2^32-1 bytes", "c6ffffffff00", "length_over_limit"),
        _refused("array32 declaring 2^32-1 elements", "ddffffffffc0", "length_over_limit"),
        _refused("map32 declaring 2^32-1 entries", "dfffffffff", "length_over_limit"),
        _refused("map16 declaring 4097 entries", "de1001", "length_over_limit"),
        _refused("32 nested arrays around 0 (depth 33)", "91" * 32 + "00", "too_deep"),
        _refused("32 nested maps around 0 (depth 33)", "81a161" * 32 + "00", "too_deep"),
    ]


def _limit_cases() -> list[tuple[str, list[tuple[bytes, int]], bool, str | None]]:
    """Boundary cases too large to list as hex: (name, pieces, accepted, reason)."""
    one_mib = 1 << 20
    bin_max = one_mib - 5  # bin32 header is 5 bytes
    return [
        (
            "str of 65536 bytes",
            [(b"\xdb" + struct.pack(">I", 65536), 1), (b"a", 65536)],
            True,
            None,
        ),
        (
            "str of 65537 bytes",
            [(b"\xdb" + struct.pack(">I", 65537), 1), (b"a", 65537)],
            False,
            "length_over_limit",
        ),
        ("array of 16384 nils", [(b"\xdc\x40\x00", 1), (b"\xc0", 16384)], True, None),
        (
            "array of 16385 nils",
            [(b"\xdc\x40\x01", 1), (b"\xc0", 16385)],
            False,
            "length_over_limit",
        ),
        (
            "bin making the value exactly 1 MiB",
            [(b"\xc6" + struct.pack(">I", bin_max), 1), (b"\x00", bin_max)],
            True,
            None,
        ),
        (
            "32,768 objects: an array of an array of 16,383 nils and one of 16,382",
            [(b"\x92\xdc\x3f\xff", 1), (b"\xc0", 16383), (b"\xdc\x3f\xfe", 1), (b"\xc0", 16382)],
            True,
            None,
        ),
        (
            "32,769 objects: an array of two arrays of 16,383 nils",
            [(b"\x92\xdc\x3f\xff", 1), (b"\xc0", 16383), (b"\xdc\x3f\xff", 1), (b"\xc0", 16383)],
            False,
            "too_many_objects",
        ),
        (
            "bin making the value 1 MiB + 1 byte",
            [(b"\xc6" + struct.pack(">I", bin_max + 1), 1), (b"\x00", bin_max + 1)],
            False,
            "too_large",
        ),
    ]


def expand_pieces(pieces: Sequence[Sequence[Any]]) -> bytes:
    """The bytes a `msgpack_pieces` list stands for: each hex piece repeated `count` times."""
    return b"".join(bytes.fromhex(piece) * int(count) for piece, count in pieces)


def codec_vector() -> Vector:
    values = []
    for name, value in _canonical_values():
        data = codec.pack(value)
        if codec.unpack(data, canonical=True) != value:
            raise AssertionError(f"codec vector {name!r} does not round-trip")
        values.append({"name": name, "value": typed(value), "msgpack": data.hex()})
    refused = []
    for case in _refusals():
        if case.canonical_only and codec.unpack(case.data) != case.lenient_value:
            raise AssertionError(f"codec vector {case.name!r} has the wrong lenient value")
        entry: dict[str, object] = {
            "name": case.name,
            "msgpack": case.data.hex(),
            "reason": case.reason,
            "refused_by": "canonical" if case.canonical_only else "any",
        }
        if case.canonical_only:
            entry["lenient_value"] = typed(case.lenient_value)
        refused.append(entry)
    limits = [
        {
            "name": name,
            "msgpack_pieces": [[piece.hex(), count] for piece, count in pieces],
            "accepted": accepted,
            **({"reason": reason} if reason is not None else {}),
        }
        for name, pieces, accepted, reason in _limit_cases()
    ]
    return {
        "description": "the canonical msgpack codec (docs/protocol.md section 2.1). `values`: a "
        "value and its only acceptable encoding (encode it and get exactly `msgpack`; decode "
        "`msgpack` with the canonical check and get the value). `refused`: inputs a decoder "
        "must refuse; `refused_by` is `any` (refused even by a reader that accepts "
        "non-canonical forms) or `canonical` (a lenient reader may accept it as "
        "`lenient_value`, a canonical one must refuse it). `limits`: boundary cases under the "
        "default limits, as `msgpack_pieces` ([hex, count] pairs: each piece repeated `count` "
        "times, concatenated).",
        "notation": 'typed values are one-key objects: {"nil": null}, {"bool": b}, '
        '{"int": decimal string}, {"str": text}, {"bin": hex}, {"array": [typed]}, '
        '{"map": [[typed key, typed value], ...]} (entries in the order given to the '
        "encoder; the canonical encoding sorts them)",
        "reasons": {
            "non_canonical_int": "an integer not in its shortest form",
            "non_canonical_str": "a str header longer than needed",
            "non_canonical_bin": "a bin header longer than needed",
            "non_canonical_array": "an array header longer than needed",
            "non_canonical_map": "a map header longer than needed",
            "unsorted_map_keys": "map entries not sorted by the encoding of their keys",
            "float": "a float32 or float64 anywhere",
            "ext": "an extension type (any length, including the timestamp type)",
            "duplicate_key": "a map holding one key twice",
            "bad_map_key": "a map key that is not a str or an int",
            "invalid_utf8": "a str that is not valid UTF-8",
            "trailing_bytes": "bytes after the one value",
            "empty": "no bytes at all",
            "truncated": "input ending inside the value",
            "reserved_byte": "the never-used type byte 0xc1",
            "length_over_limit": "a declared str/bin/array/map length over the limit (refuse "
            "from the header, before allocating)",
            "too_deep": "nesting deeper than 32 levels (a scalar alone is one level)",
            "too_large": "the whole encoding over 1 MiB",
            "too_many_objects": "more than 32,768 objects in the whole value (every value "
            "counts one, a map entry two)",
        },
        "limits_in_force": {
            "max_bytes": codec.DEFAULT_LIMITS.max_bytes,
            "max_str_len": codec.DEFAULT_LIMITS.max_str_len,
            "max_bin_len": codec.DEFAULT_LIMITS.max_bin_len,
            "max_array_len": codec.DEFAULT_LIMITS.max_array_len,
            "max_map_len": codec.DEFAULT_LIMITS.max_map_len,
            "max_depth": codec.DEFAULT_LIMITS.max_depth,
            "max_objects": codec.DEFAULT_LIMITS.max_objects,
        },
        "values": values,
        "refused": refused,
        "limits": limits,
    }


# --- 2.2 / 2.3 handshake ----------------------------------------------------------------------


@dataclass(frozen=True)
class _Inputs:
    initiator_seed: bytes
    responder_seed: bytes
    initiator_ephemeral: bytes
    responder_ephemeral: bytes
    room_secret: bytes
    table_id: bytes


def _inputs() -> _Inputs:
    rng = DeterministicRandomSource(HANDSHAKE_SEED)
    return _Inputs(
        initiator_seed=rng.bytes(32),
        responder_seed=rng.bytes(32),
        initiator_ephemeral=rng.bytes(32),
        responder_ephemeral=rng.bytes(32),
        room_secret=rng.bytes(16),
        table_id=rng.bytes(16),
    )


@dataclass(frozen=True)
class _Session:
    inputs: _Inputs
    initiator: Identity
    responder: Identity
    messages: tuple[bytes, bytes, bytes]
    initiator_result: HandshakeResult
    responder_result: HandshakeResult


def _parse(data: bytes) -> Frame:
    reader = FrameReader()
    reader.feed(data)
    frame = reader.next_frame()
    if frame is None or reader.buffered:
        raise AssertionError("a vector message is not exactly one frame")
    return frame


@functools.cache
def _session() -> _Session:
    """Run the package's handshake state machines on the fixed inputs."""
    inputs = _inputs()
    alice = Identity.from_seed(inputs.initiator_seed, INITIATOR_NICK)
    bob = Identity.from_seed(inputs.responder_seed, RESPONDER_NICK)
    init = InitiatorHandshake(
        alice,
        room_secret=inputs.room_secret,
        table_id=inputs.table_id,
        expected_peer=bob.public,
        ephemeral=X25519PrivateKey.from_private_bytes(inputs.initiator_ephemeral),
    )
    resp = ResponderHandshake(
        bob,
        room_secret=inputs.room_secret,
        table_id=inputs.table_id,
        expected_peer=alice.public,
        ephemeral=X25519PrivateKey.from_private_bytes(inputs.responder_ephemeral),
    )
    m1 = init.start()
    m2 = resp.receive_init(_parse(m1))
    m3, result_i = init.receive_response(_parse(m2))
    result_r = resp.receive_finish(_parse(m3))
    return _Session(inputs, alice, bob, (m1, m2, m3), result_i, result_r)


def _sha256(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def _hkdf64(salt: bytes, ikm: bytes, info: bytes) -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=64, salt=salt, info=info).derive(ikm)


def _x25519_public(private: bytes) -> bytes:
    return (
        X25519PrivateKey.from_private_bytes(private)
        .public_key()
        .public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    )


def _identity_json(identity: Identity, ephemeral: bytes) -> dict[str, object]:
    return {
        "ed25519_seed": identity.private_seed().hex(),
        "public_key": identity.public.raw.hex(),
        "fingerprint": identity.public.fingerprint(),
        "nickname": identity.nickname,
        "nickname_utf8": identity.nickname.encode("utf-8").hex(),
        "x25519_private": ephemeral.hex(),
        "x25519_public": _x25519_public(ephemeral).hex(),
    }


def handshake_vector() -> Vector:
    s = _session()
    i = s.inputs
    m1, m2, m3 = s.messages
    # The intermediate values the state machines keep to themselves, walked per section 2.3 and
    # tied to the package's output below: a walk that disagrees with it is never written.
    ss = X25519PrivateKey.from_private_bytes(i.initiator_ephemeral).exchange(
        X25519PublicKey.from_public_bytes(_x25519_public(i.responder_ephemeral))
    )
    h0 = _sha256(PROLOGUE_LABEL + bytes((len(i.table_id),)) + i.table_id)
    hint_input = SECRET_HINT_LABEL + bytes((len(i.table_id),)) + i.table_id
    hint = hmac.new(i.room_secret, hint_input, hashlib.sha256).digest()[:HINT_LEN]
    if m1[HEADER_LEN + 32 :] != hint:
        raise AssertionError("the secret hint walk disagrees with the state machine")
    h1 = _sha256(h0 + m1)
    hdr2, e_r, c2 = m2[:HEADER_LEN], m2[HEADER_LEN : HEADER_LEN + 32], m2[HEADER_LEN + 32 :]
    h2 = _sha256(h1 + hdr2 + e_r)
    hs_keys = _hkdf64(i.room_secret, ss, HS_KEYS_INFO + h2)
    k2, k3 = hs_keys[:32], hs_keys[32:]
    block_r = ChaCha20Poly1305(k2).decrypt(bytes(12), c2, h2)
    p_r, sig_r = block_r[:-64], block_r[-64:]
    h3 = _sha256(h2 + c2)
    c3 = m3[HEADER_LEN:]
    block_i = ChaCha20Poly1305(k3).decrypt(bytes(12), c3, h3)
    p_i, sig_i = block_i[:-64], block_i[-64:]
    h4 = _sha256(h3 + m3)
    traffic = _hkdf64(i.room_secret, ss, TRAFFIC_KEYS_INFO + h4)
    k_ir, k_ri = traffic[:32], traffic[32:]
    result_i, result_r = s.initiator_result, s.responder_result
    if not (
        h4 == result_i.session_hash == result_r.session_hash
        and k_ir == result_i.send_key == result_r.receive_key
        and k_ri == result_i.receive_key == result_r.send_key
    ):
        raise AssertionError("the handshake walk disagrees with the state machines")
    return {
        "description": "one complete handshake (docs/protocol.md sections 2.2 and 2.3) with "
        "every intermediate value, named as in the specification. The initiator pins the "
        "responder's key as expected_peer and vice versa. Ed25519 signatures are deterministic "
        "(RFC 8032), so every byte is reproducible. The responder's READY frame is the first "
        "responder_to_initiator frame of frames.json.",
        "inputs_drawn": f"from the drbg of section 1.1 with seed {HANDSHAKE_SEED.decode()!r}, in "
        "this order: initiator ed25519_seed (32), responder ed25519_seed (32), initiator "
        "x25519_private (32), responder x25519_private (32), room_secret (16), table_id (16); "
        "X25519 clamps the private keys itself (RFC 7748)",
        "drbg_seed": HANDSHAKE_SEED.hex(),
        "room_secret": i.room_secret.hex(),
        "table_id": i.table_id.hex(),
        "initiator": _identity_json(s.initiator, i.initiator_ephemeral),
        "responder": _identity_json(s.responder, i.responder_ephemeral),
        "H0": h0.hex(),
        "E_i": m1[HEADER_LEN : HEADER_LEN + 32].hex(),
        "hint": hint.hex(),
        "m1": m1.hex(),
        "H1": h1.hex(),
        "ss": ss.hex(),
        "hdr2": hdr2.hex(),
        "E_r": e_r.hex(),
        "H2": h2.hex(),
        "k2": k2.hex(),
        "k3": k3.hex(),
        "P_r": p_r.hex(),
        "sig_r": sig_r.hex(),
        "C2": c2.hex(),
        "m2": m2.hex(),
        "H3": h3.hex(),
        "P_i": p_i.hex(),
        "sig_i": sig_i.hex(),
        "C3": c3.hex(),
        "m3": m3.hex(),
        "H4": h4.hex(),
        "k_ir": k_ir.hex(),
        "k_ri": k_ri.hex(),
        "session_hash": h4.hex(),
        "version_alert": version_alert().hex(),
    }


# --- 2.4 frames -----------------------------------------------------------------------------


def _nonce(counter: int) -> bytes:
    return bytes(4) + struct.pack(">Q", counter)


def _frame_plan() -> dict[str, list[tuple[int, bytes, Any]]]:
    """Per direction, the (kind, payload, value) of each frame in counter order."""
    return {
        "responder_to_initiator": [
            (KIND_READY, b"", None),
            (KIND_DATA, *_data(["mesh"])),
            (KIND_DATA, *_data(["d", 0, 0, ["chat", "bom jogo, Jo\u00e3o!"]])),
        ],
        "initiator_to_responder": [
            (KIND_DATA, *_data(["join", {"addrs": [["192.0.2.10", 40404]]}])),
            (KIND_DATA, *_data(["d", 0, 0, bytes(range(200))])),  # several ChaCha20 blocks
            (KIND_CLOSE, b"", None),
        ],
    }


def _data(value: Any) -> tuple[bytes, Any]:
    return codec.pack(value), value


def frames_vector() -> Vector:
    s = _session()
    keys = {
        "initiator_to_responder": s.initiator_result.send_key,
        "responder_to_initiator": s.responder_result.send_key,
    }
    directions: dict[str, list[dict[str, object]]] = {}
    wire: dict[str, list[bytes]] = {}
    for direction, plan in _frame_plan().items():
        cipher = SendCipher(keys[direction])
        entries = []
        wire[direction] = []
        for counter, (kind, payload, value) in enumerate(plan):
            frame = cipher.seal(kind, payload)
            wire[direction].append(frame)
            entries.append(
                {
                    "counter": counter,
                    "kind": kind,
                    "kind_name": _KIND_NAMES[kind],
                    "payload": payload.hex(),
                    "value": None if value is None else typed(value),
                    "header": frame[:HEADER_LEN].hex(),
                    "nonce": _nonce(counter).hex(),
                    "frame": frame.hex(),
                }
            )
        directions[direction] = entries
    ir, ri = wire["initiator_to_responder"], wire["responder_to_initiator"]
    first = ir[0]
    flipped = (
        first[: HEADER_LEN + 3] + bytes((first[HEADER_LEN + 3] ^ 0x80,)) + first[HEADER_LEN + 4 :]
    )
    as_close = first[:5] + bytes((KIND_CLOSE,)) + first[HEADER_LEN:]
    as_v3 = first[:4] + b"\x03" + first[5:]
    tag_cut = frame_header(KIND_DATA, 15) + first[HEADER_LEN : HEADER_LEN + 15]
    payload0 = _frame_plan()["initiator_to_responder"][0][1]
    v1_header = frame_header(KIND_DATA, len(payload0) + 16, version=1)
    as_v1 = v1_header + ChaCha20Poly1305(keys["initiator_to_responder"]).encrypt(
        _nonce(0), payload0, v1_header
    )
    oversized = struct.pack(">I", DEFAULT_MAX_FRAME + 1) + b"\x02\x11"
    refused = [
        _refusal("a bit flipped in the ciphertext", "responder", 0, flipped, "DecryptError"),
        _refusal("kind byte changed DATA -> CLOSE", "responder", 0, as_close, "DecryptError"),
        _refusal("version byte changed 2 -> 3", "responder", 0, as_v3, "DecryptError"),
        _refusal(
            "sealed with version byte 1 (its tag verifies: refused for the version byte alone)",
            "responder",
            0,
            as_v1,
            "DecryptError",
        ),
        _refusal("replayed: frame #0 again at #1", "responder", 1, ir[0], "DecryptError"),
        _refusal("reordered: frame #1 first", "responder", 0, ir[1], "DecryptError"),
        _refusal("dropped: frame #2 right after #0", "responder", 1, ir[2], "DecryptError"),
        _refusal(
            "reflected: the responder's own READY sent back to it",
            "responder",
            0,
            ri[0],
            "DecryptError",
        ),
        _refusal(
            "an initiator frame opened with the other direction's key",
            "initiator",
            0,
            ir[0],
            "DecryptError",
        ),
        _refusal("body shorter than the tag", "responder", 0, tag_cut, "DecryptError"),
        _refusal(
            "length prefix over the default limit (refuse from these 6 bytes alone)",
            "responder",
            0,
            oversized,
            "FrameTooLarge",
        ),
        _refusal("length prefix below 2", "responder", 0, b"\x00\x00\x00\x01\x01", "DecryptError"),
    ]
    return {
        "description": "sealed traffic frames (docs/protocol.md section 2.4) under the traffic "
        "keys of handshake.json. Each direction's frames are listed in counter order from 0; "
        "`value` is the codec value (codec.json notation) a DATA payload encodes. `refused`: "
        "frames the named receiver must refuse when its next counter is `expected_counter` "
        "(the responder opens with initiator_to_responder, the initiator with "
        "responder_to_initiator).",
        "keys": {name: key.hex() for name, key in keys.items()},
        "max_frame": DEFAULT_MAX_FRAME,
        "frames": directions,
        "refused": refused,
    }


def _refusal(name: str, receiver: str, counter: int, frame: bytes, error: str) -> dict[str, object]:
    return {
        "name": name,
        "receiver": receiver,
        "expected_counter": counter,
        "frame": frame.hex(),
        "error": error,
    }


# --- 2.5 invite -----------------------------------------------------------------------------


def _invite() -> Invite:
    s = _session()
    return Invite(
        table_id=s.inputs.table_id,
        room_secret=s.inputs.room_secret,
        host_key=s.responder.public.raw,
        addresses=(
            Endpoint(ipaddress.ip_address("192.0.2.10"), 40404),
            Endpoint(ipaddress.ip_address("2001:db8::1"), 40404),
        ),
    )


def _bad_checksum_text(text: str) -> str:
    """`text` with one character of the table id changed: still base32, wrong checksum."""
    position = len("BRC-") + 3  # base32 character 3: bits 15..19, inside the table id
    swapped = "B" if text[position] != "B" else "C"
    bad = text[:position] + swapped + text[position + 1 :]
    try:
        Invite.from_text(bad)
    except InviteChecksumError:
        return bad
    raise AssertionError("the altered invite text was not refused for its checksum")


def invite_vector() -> Vector:
    invite = _invite()
    binary = invite.to_bytes()
    text = invite.to_text()
    if Invite.from_text(text) != invite or Invite.from_bytes(binary) != invite:
        raise AssertionError("the invite vector does not round-trip")
    grouped = text.split("-")
    variants = [
        text.lower(),
        "".join(grouped),
        "  " + " ".join(grouped[:4]) + "\n" + "-".join(grouped[4:]) + "\n",
    ]
    version_2 = b"\x02" + binary[1:]
    truncated_text = text[: len(text) - 7]
    refused = [
        {"name": "one character changed", "text": _bad_checksum_text(text),
         "error": "InviteChecksumError"},
        {"name": "checksum byte changed", "binary": (binary[:-1] + bytes((binary[-1] ^ 1,))).hex(),
         "error": "InviteChecksumError"},
        {"name": "version 2", "binary": version_2.hex(), "error": "InviteVersionError"},
        {"name": "last address and checksum missing", "binary": binary[:-10].hex(),
         "error": "InviteTruncatedError"},
        {"name": "text cut short", "text": truncated_text, "error": "InviteTruncatedError"},
        {"name": "a trailing byte after the checksum", "binary": (binary + b"\x00").hex(),
         "error": "InviteFormatError"},
        {"name": "a character outside base32", "text": text[:-1] + "1",
         "error": "InviteFormatError"},
    ]  # fmt: skip
    return {
        "description": "an invite code (docs/protocol.md section 2.5): its fields, binary form "
        "and text form; `accepted_text_forms` must decode to the same invite, `refused` inputs "
        "must give the named error. Table id, room secret and host key are those of "
        "handshake.json (the host is the responder).",
        "invite": {
            "version": invite.version,
            "table_id": invite.table_id.hex(),
            "room_secret": invite.room_secret.hex(),
            "host_key": invite.host_key.hex(),
            "addresses": [
                {"family": ep.ip.version, "ip": str(ep.ip), "port": ep.port}
                for ep in invite.addresses
            ],
        },
        "binary": binary.hex(),
        "checksum": binary[-4:].hex(),
        "text": text,
        "accepted_text_forms": variants,
        "refused": refused,
    }


# --- identity keys (2.2) ---------------------------------------------------------------------

_SMALL_ORDER: Final = (
    ("the neutral point (order 1)", "01" + "00" * 31),
    ("order 2", "ec" + "ff" * 30 + "7f"),
    ("order 4, y = 0, x even", "00" * 32),
    ("order 4, y = 0, x odd", "00" * 31 + "80"),
    ("order 8", "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a"),
    ("order 8", "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa"),
    ("order 8", "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05"),
    ("order 8", "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85"),
)
_NON_CANONICAL: Final = (
    ("y = p + 1: the neutral point", "ee" + "ff" * 30 + "7f"),
    ("y = p: an order-4 point", "ed" + "ff" * 30 + "7f"),
    ("y = 2^255 - 1", "ff" * 31 + "7f"),
    ("sign bit set on x = 0 (the neutral point)", "01" + "00" * 30 + "80"),
    ("sign bit set on x = 0 (the order-2 point)", "ec" + "ff" * 31),
)


def _mixed_order(honest: bytes) -> bytes:
    """`honest` plus the point of order 2 (0, -1): canonical, on the curve, not of order L."""
    p = edwards._P
    x, y = edwards._decode(honest)
    sx, sy, sz, _ = edwards._add((x, y, 1, x * y % p), (0, p - 1, 1, 0))
    zi = pow(sz, p - 2, p)
    ax, ay = sx * zi % p, sy * zi % p
    return (ay | ((ax & 1) << 255)).to_bytes(32, "little")


def identity_keys_vector() -> Vector:
    s = _session()
    honest = [s.initiator.public.raw, s.responder.public.raw]
    refused: list[dict[str, str]] = []
    cases = (
        [(name, key, "small-order") for name, key in _SMALL_ORDER]
        + [(name, key, "non-canonical") for name, key in _NON_CANONICAL]
        + [
            ("y = 2: not a point of the curve", "02" + "00" * 31, "off-curve"),
            ("handshake.json's responder key plus the order-2 point",
             _mixed_order(s.responder.public.raw).hex(), "mixed-order"),
        ]
    )  # fmt: skip
    needles = {
        "small-order": "small-order Ed25519 point",
        "non-canonical": "canonical",
        "off-curve": "not a point of the curve",
        "mixed-order": "small-order component",
    }
    for name, key, reason in cases:
        try:
            PeerKey(bytes.fromhex(key))
        except ValueError as exc:
            if needles[reason] not in str(exc):
                raise AssertionError(f"{name}: refused for another reason: {exc}") from None
        else:
            raise AssertionError(f"{name}: the identity key was accepted")
        refused.append({"name": name, "key": key, "reason": reason})
    for raw in honest:
        PeerKey(raw)
    return {
        "description": "identity keys (docs/protocol.md section 2.2): every `refused` key must "
        "be refused wherever an identity key is read (handshake identity block, roster, invite, "
        "relay records), for the named reason; the `accepted` keys are handshake.json's.",
        "accepted": [key.hex() for key in honest],
        "refused": refused,
    }


# --- table and mesh records (2.6-2.10) --------------------------------------------------------

MESH_SEED: Final = b"buraco-p2p/vectors/mesh"


def _mesh_records() -> tuple[list[dict[str, object]], list[dict[str, object]]]:
    """(records with their encodings, records that close the link they arrive on)."""
    s = _session()
    rng = DeterministicRandomSource(MESH_SEED)
    host, joao = s.responder.public, s.initiator.public
    caio = Identity.from_seed(rng.bytes(32), "Caio").public
    inc_host, inc_joao = rng.bytes(16), rng.bytes(16)
    mesh_secret = rng.bytes(16)
    table_id = s.inputs.table_id
    v4 = Endpoint.parse("192.168.1.20", 47100)
    v6 = Endpoint.parse("2001:db8::20", 47100)
    mapped = Endpoint.parse("203.0.113.20", 47100)
    turned = Endpoint.parse("198.51.100.4", 49152)
    members = (
        Member(0, host, RESPONDER_NICK, (v4,)),
        Member(1, joao, INITIATOR_NICK, (v6,)),
    )
    roster = Roster(table_id, 3, members)
    kicked = Roster(
        table_id, 5, (members[0], Member(2, caio, "Caio", ())), 4, (Departure(1, joao, KICKED),)
    )
    ok: list[tuple[str, str, Any]] = [
        ("join greeting", "a joiner, first on its link to the host",
         join_message((v4, v6))),
        ("join greeting without addresses", "the same, reachable through the relay only",
         join_message(())),
        ("join greeting with a relayed address", "a joiner with --turn: its TURN server's "
         "relayed address last, kinds beside the addresses (0 own interface, 3 relayed)",
         join_message((v4, turned), (CandidateKind.HOST, CandidateKind.RELAYED))),
        ("roster with kinds", "the host's entry with a mapped and a relayed address, João's "
         "with own-interface addresses only (no kinds)",
         roster_message(Roster(table_id, 4, (
             Member(0, host, RESPONDER_NICK, (v4, mapped, turned),
                    (CandidateKind.HOST, CandidateKind.MAPPED, CandidateKind.RELAYED)),
             members[1])))),
        ("mesh greeting", "the dialer of a link between two seated peers", mesh_message()),
        ("welcome", "the host's answer: seat 1 (0-based), the roster and the mesh secret",
         welcome_message(1, roster, mesh_secret)),
        ("refused", "the host's final answer", refused_message("the table is full")),
        ("roster after a kick", "seat 1 freed by a kick, seat 2 taken: lawful after `welcome`",
         roster_message(kicked)),
        ("resume, first link", "João to the host: it knows nothing of the host's stream",
         Resume(inc_joao, 0, None, 0).to_wire()),
        ("resume, later link", "the host to João: 12 sent, 9 still buffered; 7 of João's received",
         Resume(inc_host, 3, inc_joao, 7).to_wire()),
        ("data with a chat message", "seq 7, acknowledging 5 consumed",
         Data(7, 5, ["chat", "bom jogo, Jo\u00e3o!"]).to_wire()),
        ("ack, also the heartbeat", "6 consumed", Ack(6).to_wire()),
        ("leave", "a joiner to the host: it gives up its seat", [LEAVE]),
        ("relay open", "João to the host: open channel 7 to caio",
         RelayRecord("ro", caio, 7).to_wire()),
        ("relay data", "the host to caio: a chunk of channel 7, from João",
         RelayRecord("rd", joao, 7, bytes(range(16))).to_wire()),
        ("relay close", "either way", RelayRecord("rc", caio, 7).to_wire()),
        ("seen", "the host to João: the address:port it sees João's link come from",
         ["seen", ["198.51.100.7", 40404]]),
        ("ping", "the host to João: a round-trip probe", ["ping", 3141592653]),
        ("pong", "João to the host: the answer, same nonce", ["pong", 3141592653]),
        ("punch", "the host to João: dial caio now, at these candidates",
         punch_message(caio, (Endpoint.parse("198.51.100.9", 40404),
                              Endpoint.parse("192.168.7.3", 40404)))),
    ]  # fmt: skip
    for name, _, value in ok:
        if name.startswith(("welcome", "roster")):
            wire = value[2] if name.startswith("welcome") else value[1]
            if Roster.from_wire(wire, "vector").to_wire() != wire:
                raise AssertionError(f"{name}: the roster does not round-trip")
    succession(roster, kicked, "vector")
    records = [
        {"name": name, "comment": comment, "value": typed(value),
         "msgpack": codec.pack(value).hex()}
        for name, comment, value in ok
    ]  # fmt: skip
    closing: list[tuple[str, str, Any]] = [
        ("not an array", "any", {"d": 1}),
        ("an empty array", "any", []),
        ("first element not a str", "any", [[1], 2]),
        ("resume after the resume", "any mesh link, resumed",
         Resume(inc_joao, 0, None, 0).to_wire()),
        ("data before the resume", "any mesh link, before the resume", Data(0, 0, 1).to_wire()),
        ("roster from a joiner", "a joiner, from a joiner", roster_message(roster)),
        ("relay between joiners", "a joiner, from a joiner", RelayRecord("ro", host, 1).to_wire()),
        ("incarnation of 15 bytes", "any mesh link, before the resume",
         ["r", inc_joao[:15], 0, None, 0]),
        ("incarnation as a str", "any mesh link, before the resume",
         ["r", inc_joao.hex(), 0, None, 0]),
        ("negative sequence number", "any mesh link, resumed", ["d", -1, 0, 1]),
        ("sequence number of 2^63", "any mesh link, resumed", ["d", 2**63, 0, 1]),
        ("ack as a bool", "any mesh link, resumed", ["a", True]),
        ("unknown tag", "any", ["zz"]),
        ("port 0 in the greeting", "any accepted link, first message",
         ["join", {"addrs": [["192.168.1.20", 0]]}]),
        ("port 70000 in the greeting", "any accepted link, first message",
         ["join", {"addrs": [["192.168.1.20", 70000]]}]),
        ("a host name in the greeting", "any accepted link, first message",
         ["join", {"addrs": [["example.org", 47100]]}]),
        ("a zone id in the greeting", "any accepted link, first message",
         ["join", {"addrs": [["fe80::1%lo", 4000]]}]),
        ("an extra key in the greeting", "any accepted link, first message",
         ["join", {"addrs": [], "nick": "Eve"}]),
        ("a greeting without addrs", "any accepted link, first message", ["join", {}]),
        ("a greeting with fewer kinds than addresses", "any accepted link, first message",
         ["join", {"addrs": [["192.168.1.20", 47100], ["198.51.100.4", 49152]], "kinds": [3]}]),
        ("a greeting with kind 4", "any accepted link, first message",
         ["join", {"addrs": [["198.51.100.4", 49152]], "kinds": [4]}]),
        ("a greeting with a kind as a bool", "any accepted link, first message",
         ["join", {"addrs": [["198.51.100.4", 49152]], "kinds": [True]}]),
        ("a greeting with kinds all 0", "any accepted link, first message",
         ["join", {"addrs": [["192.168.1.20", 47100]], "kinds": [0]}]),
        ("a greeting with kinds and no addresses", "any accepted link, first message",
         ["join", {"addrs": [], "kinds": []}]),
        ("a greeting with a relayed LAN address", "any accepted link, first message",
         ["join", {"addrs": [["192.168.1.20", 47100]], "kinds": [3]}]),
        ("a greeting with a relayed loopback address", "any accepted link, first message",
         ["join", {"addrs": [["127.0.0.1", 47100]], "kinds": [3]}]),
        ("a greeting with a relayed IPv4-mapped address", "any accepted link, first message",
         ["join", {"addrs": [["::ffff:198.51.100.4", 49152]], "kinds": [3]}]),
        ("a greeting with two relayed addresses", "any accepted link, first message",
         ["join", {"addrs": [["198.51.100.4", 49152], ["198.51.100.5", 49152]],
                   "kinds": [3, 3]}]),
        ("roster with a member's relayed LAN address", "a joiner, from the host",
         ["roster", {**roster.to_wire(), "members": [
             members[0].to_wire(), {**members[1].to_wire(), "addrs": [["10.0.0.7", 47100]],
                                    "kinds": [3]}]}]),
        ("roster with a member's kinds all 0", "a joiner, from the host",
         ["roster", {**roster.to_wire(), "members": [
             members[0].to_wire(), {**members[1].to_wire(), "kinds": [0]}]}]),
        ("refused with a reason of 201 characters",
         "a joiner, from the host, waiting for the answer", ["refused", "x" * 201]),
        ("refused with a reason that is not a str",
         "a joiner, from the host, waiting for the answer", ["refused", 3]),
        ("roster with seat 1 before seat 0", "a joiner, from the host",
         ["roster", {**roster.to_wire(), "members": [
             {**members[1].to_wire(), "seat": 1}, members[0].to_wire()]}]),
        ("roster with a seat count of 1", "a joiner, from the host",
         ["roster", {**roster.to_wire(), "seats": 1}]),
        ("relay chunk of 16385 bytes", "a joiner, from the host",
         ["rd", joao.raw, 7, bytes(16385)]),
        ("punch to a multicast address", "a joiner, from the host",
         ["punch", caio.raw, [["224.0.0.251", 5353]]]),
        ("punch to the loopback", "a joiner, from the host",
         ["punch", caio.raw, [["127.0.0.1", 22]]]),
        ("punch to the unspecified address", "a joiner, from the host",
         ["punch", caio.raw, [["::", 40404]]]),
        ("punch to an IPv4-mapped loopback", "a joiner, from the host",
         ["punch", caio.raw, [["::ffff:127.0.0.1", 22]]]),
        ("punch to an IPv4-mapped public address", "a joiner, from the host",
         ["punch", caio.raw, [["::ffff:198.51.100.9", 40404]]]),
        ("punch to a NAT64 address", "a joiner, from the host",
         ["punch", caio.raw, [["64:ff9b::c633:6409", 40404]]]),
        ("punch to a link-local address with a zone id", "a joiner, from the host",
         ["punch", caio.raw, [["fe80::1%eth0", 40404]]]),
        ("punch to a global address with a zone id", "a joiner, from the host",
         ["punch", caio.raw, [["2001:db8::9%eth0", 40404]]]),
        ("seen with a zone id", "a joiner, from the host", ["seen", ["fe80::1%eth0", 40404]]),
        ("punch with no candidate", "a joiner, from the host", ["punch", caio.raw, []]),
        ("punch with 9 candidates", "a joiner, from the host",
         ["punch", caio.raw, [[f"198.51.100.{i}", 40404] for i in range(1, 10)]]),
        ("punch with port 0", "a joiner, from the host",
         ["punch", caio.raw, [["198.51.100.9", 0]]]),
        ("ping nonce of 2^32", "a joiner, from the host", ["ping", 2**32]),
        ("pong from the host", "a joiner, from the host", ["pong", 1]),
        ("punch between joiners", "a joiner, from a joiner",
         ["punch", caio.raw, [["198.51.100.9", 40404]]]),
    ]  # fmt: skip
    refused = [
        {"name": name, "link": link, "value": typed(value), "msgpack": codec.pack(value).hex()}
        for name, link, value in closing
    ]
    return records, refused


LOBBY_SEED: Final = b"buraco-p2p/vectors/lobby"


def lobby_identities() -> list[Identity]:
    """The four seated peers of the lobby vectors, in seat order: the host (Bia) and João are
    handshake.json's responder and initiator, caio is the mesh vector's, dan is drawn from
    the stream of 1.1 seeded with `buraco-p2p/vectors/lobby` (and then an unseated key)."""
    s = _session()
    caio = Identity.from_seed(DeterministicRandomSource(MESH_SEED).bytes(32), "Caio")
    dan = Identity.from_seed(DeterministicRandomSource(LOBBY_SEED).bytes(32), "Dan")
    return [s.responder, s.initiator, caio, dan]


def lobby_roster() -> Roster:
    """The roster the lobby vectors are read against: `lobby_identities` in seats 0..3."""
    ids = lobby_identities()
    members = tuple(Member(seat, i.public, i.nickname, ()) for seat, i in enumerate(ids))
    return Roster(_session().inputs.table_id, len(ids), members, len(ids))


def _lobby_payloads() -> tuple[
    list[dict[str, object]], list[dict[str, object]], list[dict[str, object]]
]:
    """(the lobby's application payloads, payloads tagged like them that a receiver drops,
    the host's `bots` that waits for a roster seating its keys)."""
    from buraco_p2p.net.table.appmessages import (
        MAX_RULE_OVERRIDES,
        MAX_RULE_TEXT,
        bots_announced,
        bots_claimed,
        chat_said,
        is_ready,
        rules_announced,
    )

    roster = lobby_roster()
    host, joao, caio, dan = (m.key.raw for m in roster.members)
    rng = DeterministicRandomSource(LOBBY_SEED)
    rng.bytes(32)  # dan's seed
    unseated = Identity.from_seed(rng.bytes(32), "Eve").public.raw
    small_order = bytes(32)  # the identity point's encoding is refused as a key (2.2)

    ok: list[tuple[str, str, Any]] = [
        ("ready", "any seated peer", ["ready"]),
        ("rules", "the host", ["rules", "italian", ["target_score=2500", "players=4"]]),
        ("rules without overrides", "the host", ["rules", "classic", []]),
        ("rules with an override without `=`: shown as unknown", "the host",
         ["rules", "classic", ["target_score"]]),
        ("rules at its bounds", "the host",
         ["rules", "classic", ["k=" + "v" * (MAX_RULE_TEXT - 2)] * MAX_RULE_OVERRIDES]),
        ("chat", "any seated peer", ["chat", "bom jogo, Jo\u00e3o!"]),
        ("bots: seats 2 and 3 are the host's bots", "the host", ["bots", [caio, dan]]),
        ("bots: no seat is a bot", "the host", ["bots", []]),
        ("bots: seat 2 is the host's bot", "the host", ["bots", [caio]]),
    ]  # fmt: skip
    dropped: list[tuple[str, Any]] = [
        ("ready with an argument", ["ready", 1]),
        ("rules without overrides", ["rules", "classic"]),
        ("rules with a fourth element", ["rules", "classic", [], "extra"]),
        ("rules with a preset that is not a str", ["rules", 7, []]),
        ("rules with overrides that are not an array", ["rules", "classic", "target_score=2500"]),
        ("rules with an override that is not a str", ["rules", "classic", [3000]]),
        ("rules with 17 overrides", ["rules", "classic", ["k=v"] * (MAX_RULE_OVERRIDES + 1)]),
        ("rules with an override of 81 code points",
         ["rules", "classic", ["k=" + "v" * (MAX_RULE_TEXT - 1)]]),
        ("chat that is not a str", ["chat", 5]),
        ("bots without its array", ["bots"]),
        ("bots with a third element", ["bots", [caio], []]),
        ("bots with a key that is not in an array", ["bots", caio]),
        ("bots with a key of 31 bytes", ["bots", [caio[:31]]]),
        ("bots with a key that is a str", ["bots", [caio.hex()]]),
        ("bots with a key that is no identity key", ["bots", [small_order]]),
        ("bots naming a key twice", ["bots", [caio, caio]]),
        ("bots naming the host", ["bots", [host, caio]]),
        ("bots with more keys than seats but one", ["bots", [joao, caio, dan, unseated]]),
        ("a map", {"text": "hi"}),
        ("an empty array", []),
        ("an array led by an array", [[0], 1]),
        ("an array led by a map", [{"a": 1}]),
        ("an array led by an integer", [5, "chat"]),
    ]  # fmt: skip
    deferred: list[tuple[str, Any]] = [
        ("bots naming a key that holds no seat", ["bots", [unseated]]),
        ("bots naming seat 2 and a key that holds no seat", ["bots", [caio, unseated]]),
    ]
    from_host = roster.host.key
    for name, value in deferred:
        if bots_claimed(value, from_host, roster) is None:
            raise AssertionError(f"{name}: the lobby refuses it")
        if bots_announced(value, from_host, roster) is not None:
            raise AssertionError(f"{name}: the lobby marks it at once")
    for name, _, value in ok:
        if value[0] == "rules" and rules_announced(value) is None:
            raise AssertionError(f"{name}: the lobby refuses it")
        if value[0] == "bots" and bots_announced(value, from_host, roster) is None:
            raise AssertionError(f"{name}: the lobby refuses it")
        if value[0] == "ready" and not is_ready(value):
            raise AssertionError(f"{name}: the lobby refuses it")
        if value[0] == "chat" and chat_said(value) is None:
            raise AssertionError(f"{name}: the lobby refuses it")
    for name, value in dropped:
        taken = bots_announced(value, from_host, roster) is not None
        taken = taken or chat_said(value) is not None or is_ready(value)
        if taken or rules_announced(value) is not None:
            raise AssertionError(f"{name}: the lobby takes it")
    return (
        [{"name": name, "sender": sender, "value": typed(value),
          "msgpack": codec.pack(value).hex()} for name, sender, value in ok],
        [{"name": name, "value": typed(value), "msgpack": codec.pack(value).hex()}
         for name, value in dropped],
        [{"name": name, "value": typed(value), "msgpack": codec.pack(value).hex()}
         for name, value in deferred],
    )  # fmt: skip


def mesh_vector() -> Vector:
    records, refused = _mesh_records()
    lobby, dropped, deferred = _lobby_payloads()
    roster = lobby_roster()
    return {
        "description": "table and mesh records (docs/protocol.md sections 2.6-2.10), each the "
        "whole payload of one DATA frame: their values and canonical encodings; `closes_the_link` "
        "lists records that a receiver must refuse on the named link by closing that link. Keys "
        "are handshake.json's (the host, seat 0, is its responder Bia; the joiner in seat 1 is "
        "its initiator João) and caio's, whose Ed25519 seed is the first 32 bytes of the stream "
        "of 1.1 seeded with `buraco-p2p/vectors/mesh`; the next 16 bytes are the host's "
        "incarnation, the next 16 João's, the next 16 the welcome's mesh secret. "
        "`lobby_payloads` are the lobby's application messages (2.10, each the `payload` of a `d` "
        "record) with who sends them; `dropped_payloads` are payloads a receiver acknowledges "
        "and drops (the link stays up), even from the host; `deferred_payloads` are `bots` "
        "messages from the host, well formed but naming a key the roster does not seat: the "
        "receiver keeps the latest one, leaves the marks it has as they are, and acts on it only "
        "when it adopts a roster seating every key it names. All are read against "
        "`lobby_roster`: a table of `seats` seats whose seated identity keys are `keys` in seat "
        "order (seat 0 the host Bia; seat 1 João; seat 2 caio above; seat 3's seed and then the "
        "seed of the key named as holding no seat are the first two 32-byte draws of the stream "
        "of 1.1 seeded with `buraco-p2p/vectors/lobby`).",
        "records": records,
        "closes_the_link": refused,
        "lobby_payloads": lobby,
        "dropped_payloads": dropped,
        "deferred_payloads": deferred,
        "lobby_roster": {
            "seats": roster.seats,
            "keys": [m.key.raw.hex() for m in roster.members],
        },
    }


# --- 2.11 candidates, STUN and punch timing ------------------------------------------------


def _ms(seconds: float) -> int | float:
    """Milliseconds as written in the vector: an integer when whole (70, not 69.99999999999999,
    which is what 0.07 s times 1000 gives in binary floating point), else to the microsecond."""
    ms = round(seconds * 1000, 3)
    return int(ms) if ms == int(ms) else ms


def candidates_vector() -> Vector:
    from buraco_p2p.net.reach.punch import start_delays
    from buraco_p2p.net.reach.stun import binding_request, binding_response

    base = _invite()
    addresses = (
        Endpoint(ipaddress.ip_address("192.168.1.20"), 40404),
        Endpoint(ipaddress.ip_address("2001:db8::9a3c:11d2:7e01:5b2a"), 40404),
        Endpoint(ipaddress.ip_address("198.51.100.7"), 40404),
    )
    invite = Invite(
        base.table_id, base.room_secret, base.host_key, addresses, kinds=(0, 0, 2), nat_class=2
    )
    binary = invite.to_bytes()
    if Invite.from_bytes(binary) != invite:
        raise AssertionError("the candidate invite vector does not round-trip")
    transaction = hashlib.sha256(b"buraco-p2p/vectors/stun").digest()[:12]
    request = binding_request(transaction)
    stun = []
    for observed in (addresses[2], Endpoint(ipaddress.ip_address("2001:db8::7"), 51000)):
        stun.append({
            "observed": {"ip": str(observed.ip), "port": observed.port},
            "response": binding_response(request, observed).to_bytes().hex(),
        })  # fmt: skip
    counts = 65  # offset of the counts byte
    refused = [
        {"name": "candidate kind 4", "binary": _recheck(binary, counts + 1, 0x44).hex(),
         "error": "InviteFormatError"},
        {"name": "bit 5 of the counts byte set: 35 addresses declared",
         "binary": _recheck(binary, counts, 0xA3).hex(), "error": "InviteTruncatedError"},
        {"name": "family 5 (unknown) on the IPv6 entry: its 19 bytes are read, then refused",
         "binary": _recheck(binary, counts + 1 + 7, 0x05).hex(), "error": "InviteFormatError"},
        {"name": "family 5 (unknown) on the first IPv4 entry: read as 19 bytes, too few follow",
         "binary": _one_address(binary, 0x05).hex(), "error": "InviteTruncatedError"},
    ]  # fmt: skip
    delays = [
        {"rtt_a_ms": a, "rtt_b_ms": b, "delay_a_ms": _ms(d.first), "delay_b_ms": _ms(d.second)}
        for a, b in ((180, 40), (10, 50), (25, 25))
        for d in [start_delays(a / 1000, b / 1000)]
    ]
    reply = _reply_vector(base.room_secret, base.table_id)
    relayed_ep = Endpoint(ipaddress.ip_address("198.51.100.4"), 49200)
    relayed = Invite(
        base.table_id, base.room_secret, base.host_key, (addresses[0], addresses[2], relayed_ep),
        kinds=(0, 2, 3), nat_class=3,
    )  # fmt: skip
    if Invite.from_bytes(relayed.to_bytes()) != relayed:
        raise AssertionError("the relayed invite vector does not round-trip")
    return {
        "reply_code": reply,
        "relayed_invite": {
            "kinds": list(relayed.kinds),
            "nat_class": relayed.nat_class,
            "addresses": [{"ip": str(ep.ip), "port": ep.port} for ep in relayed.addresses],
            "binary": relayed.to_bytes().hex(),
            "text": relayed.to_text(),
        },
        "relayed_reply_code": _relayed_reply_vector(base.room_secret, base.table_id),
        "turn": _turn_vector(),
        "description": "candidates (docs/protocol.md section 2.11): an invite whose addresses "
        "carry candidate kinds and whose counts byte carries the host's NAT class, invites "
        "refused for those bits and for an unknown family (2.5's declared structure: an entry "
        "of family 4 is 7 bytes, of any other family 19), a STUN Binding request and the "
        "success responses a server sends for an IPv4 and an IPv6 reflexive address, the "
        "coordinator's start delays, and a joiner's reply code (section 2.12) keyed with the "
        "room secret and table id of invite.json, with altered codes a host must refuse; an "
        "invite of a host behind a random NAT with a TURN-relayed candidate (kind 3), a "
        "joiner's reply code with its relayed address, and the TURN messages of section 2.14.",
        "invite": {
            "kinds": list(invite.kinds),
            "nat_class": invite.nat_class,
            "addresses": [{"ip": str(ep.ip), "port": ep.port} for ep in addresses],
            "binary": binary.hex(),
            "text": invite.to_text(),
        },
        "refused": refused,
        "stun": {
            "transaction": transaction.hex(),
            "request": request.to_bytes().hex(),
            "responses": stun,
        },
        "punch_delays": delays,
    }


def _reply_vector(room_secret: bytes, table_id: bytes) -> Vector:
    from buraco_p2p.net.reach.candidates import Candidate, CandidateKind, NatClass
    from buraco_p2p.net.reach.reply import ReplyCode

    reflexive = Endpoint(ipaddress.ip_address("203.0.113.9"), 40400)
    own = Endpoint(ipaddress.ip_address("2001:db8:2::2"), 40400)
    code = ReplyCode(
        (Candidate(CandidateKind.REFLEXIVE, reflexive), Candidate(CandidateKind.HOST, own)),
        NatClass.INDEPENDENT,
    )
    other_table = code.to_bytes(room_secret, bytes(16))
    binary = code.to_bytes(room_secret, table_id)
    text = code.to_text(room_secret, table_id)
    flipped = binary[:2] + bytes((binary[2] ^ 0x10,)) + binary[3:]
    return {
        "candidates": [
            {"kind": int(c.kind), "ip": str(c.endpoint.ip), "port": c.endpoint.port}
            for c in code.candidates
        ],
        "nat_class": int(code.nat_class),
        "binary": binary.hex(),
        "tag": binary[-8:].hex(),
        "text": text,
        "refused": [
            {"name": "a candidate's kind changed", "binary": flipped.hex()},
            {"name": "keyed with another table id", "binary": other_table.hex()},
        ],
    }


def _relayed_reply_vector(room_secret: bytes, table_id: bytes) -> Vector:
    from buraco_p2p.net.reach.candidates import Candidate, CandidateKind, NatClass
    from buraco_p2p.net.reach.reply import ReplyCode

    code = ReplyCode(
        (Candidate(CandidateKind.REFLEXIVE, Endpoint(ipaddress.ip_address("203.0.113.9"), 40400)),
         Candidate(CandidateKind.RELAYED, Endpoint(ipaddress.ip_address("198.51.100.4"), 49300))),
        NatClass.RANDOM,
    )  # fmt: skip
    return {
        "candidates": [
            {"kind": int(c.kind), "ip": str(c.endpoint.ip), "port": c.endpoint.port}
            for c in code.candidates
        ],
        "nat_class": int(code.nat_class),
        "binary": code.to_bytes(room_secret, table_id).hex(),
        "text": code.to_text(room_secret, table_id),
    }


def _turn_vector() -> Vector:
    """The TURN messages a client sends and reads (2.14), with fixed transaction ids."""
    import struct

    from buraco_p2p.net.reach import turnwire as w
    from buraco_p2p.net.reach.stun import (
        ERROR,
        INDICATION,
        REQUEST,
        SUCCESS,
        StunMessage,
        error_value,
        message_type,
        with_integrity,
        xor_address,
    )

    user, password = "ana", "correct horse"
    realm, nonce = b"buraco.example", b"5f2b9c0e6d1a4b7e"
    key = w.long_term_key(user, realm, password)

    def tid(name: str) -> bytes:
        return hashlib.sha256(b"buraco-p2p/vectors/turn/" + name.encode()).digest()[:12]

    transport = (w.ATTR_REQUESTED_TRANSPORT, struct.pack(">BBBB", w.TRANSPORT_TCP, 0, 0, 0))
    life = (w.ATTR_LIFETIME, struct.pack(">I", 600))
    relayed = Endpoint(ipaddress.ip_address("198.51.100.4"), 49200)
    mapped = Endpoint(ipaddress.ip_address("203.0.113.9"), 51012)
    peer = Endpoint(ipaddress.ip_address("203.0.113.77"), 40400)
    cid = bytes.fromhex("0000a1b2")
    first = StunMessage(message_type(w.ALLOCATE, REQUEST), tid("allocate-1"), (transport, life))
    challenge = StunMessage(message_type(w.ALLOCATE, ERROR), tid("allocate-1"), (
        (0x0009, error_value(401, "Unauthorized")), (w.ATTR_REALM, realm), (w.ATTR_NONCE, nonce),
    ))  # fmt: skip

    def signed(method: int, name: str, attrs: list[tuple[int, bytes]]) -> str:
        return w.signed_request(method, tid(name), attrs, user=user, realm=realm, nonce=nonce,
                                key=key).hex()  # fmt: skip

    success = StunMessage(message_type(w.ALLOCATE, SUCCESS), tid("allocate-2"), (
        (w.ATTR_XOR_RELAYED_ADDRESS, xor_address(relayed, tid("allocate-2"))),
        (w.ATTR_XOR_MAPPED_ADDRESS, xor_address(mapped, tid("allocate-2"))), life,
    ))  # fmt: skip
    attempt = StunMessage(message_type(w.CONNECTION_ATTEMPT, INDICATION), tid("attempt"), (
        (w.ATTR_CONNECTION_ID, cid), (w.ATTR_XOR_PEER_ADDRESS, xor_address(peer, tid("attempt"))),
    ))  # fmt: skip
    # The same on an IPv6 relay: every XOR address is xored with cookie || transaction id.
    relayed6 = Endpoint(ipaddress.ip_address("2001:db8::4"), 49200)
    mapped6 = Endpoint(ipaddress.ip_address("2001:db8:9::9"), 51012)
    peer6 = Endpoint(ipaddress.ip_address("2001:db8:77::77"), 40400)
    success6 = StunMessage(message_type(w.ALLOCATE, SUCCESS), tid("allocate-2-v6"), (
        (w.ATTR_XOR_RELAYED_ADDRESS, xor_address(relayed6, tid("allocate-2-v6"))),
        (w.ATTR_XOR_MAPPED_ADDRESS, xor_address(mapped6, tid("allocate-2-v6"))), life,
    ))  # fmt: skip
    attempt6 = StunMessage(message_type(w.CONNECTION_ATTEMPT, INDICATION), tid("attempt-v6"), (
        (w.ATTR_CONNECTION_ID, cid),
        (w.ATTR_XOR_PEER_ADDRESS, xor_address(peer6, tid("attempt-v6"))),
    ))  # fmt: skip
    two = sorted([peer.ip, ipaddress.ip_address("198.51.100.20")], key=str)
    return {
        "user": user,
        "password": password,
        "realm": realm.decode(),
        "nonce": nonce.decode(),
        "key": key.hex(),
        "allocate_first": first.to_bytes().hex(),
        "allocate_challenge": challenge.to_bytes().hex(),
        "allocate": signed(w.ALLOCATE, "allocate-2", [transport, life]),
        "allocate_success": {
            "relayed": str(relayed), "mapped": str(mapped), "lifetime": 600,
            "binary": with_integrity(success, key).hex(),
        },
        "create_permission": {
            "peer_ip": str(peer.ip),
            "binary": signed(w.CREATE_PERMISSION, "permission", [
                (w.ATTR_XOR_PEER_ADDRESS, xor_address(Endpoint(peer.ip, 1), tid("permission")))
            ]),
        },
        "refresh": signed(w.REFRESH, "refresh", [life]),
        "connection_attempt": {
            "connection_id": cid.hex(), "peer": str(peer), "binary": attempt.to_bytes().hex(),
        },
        "connection_bind": signed(w.CONNECTION_BIND, "bind", [(w.ATTR_CONNECTION_ID, cid)]),
        "release": signed(w.REFRESH, "release", [(w.ATTR_LIFETIME, bytes(4))]),
        "create_permission_two": {
            "peer_ips": [str(ip) for ip in two],
            "binary": signed(w.CREATE_PERMISSION, "permission-2", [
                (w.ATTR_XOR_PEER_ADDRESS, xor_address(Endpoint(ip, 1), tid("permission-2")))
                for ip in two
            ]),
        },
        "allocate_success_v6": {
            "relayed": str(relayed6), "mapped": str(mapped6), "lifetime": 600,
            "binary": with_integrity(success6, key).hex(),
        },
        "create_permission_v6": {
            "peer_ip": str(peer6.ip),
            "binary": signed(w.CREATE_PERMISSION, "permission-v6", [
                (w.ATTR_XOR_PEER_ADDRESS, xor_address(Endpoint(peer6.ip, 1), tid("permission-v6")))
            ]),
        },
        "connection_attempt_v6": {
            "connection_id": cid.hex(), "peer": str(peer6), "binary": attempt6.to_bytes().hex(),
        },
        "transaction_names": {
            "allocate_first": "allocate-1", "allocate_challenge": "allocate-1",
            "allocate": "allocate-2", "allocate_success": "allocate-2",
            "create_permission": "permission", "refresh": "refresh", "release": "release",
            "connection_attempt": "attempt", "connection_bind": "bind",
            "create_permission_two": "permission-2", "allocate_success_v6": "allocate-2-v6",
            "create_permission_v6": "permission-v6", "connection_attempt_v6": "attempt-v6",
        },
    }


def _one_address(binary: bytes, tag: int) -> bytes:
    """`binary`'s header and first (IPv4) entry only, with that entry's tag byte set to `tag`
    and the checksum made again over those bytes."""
    counts = 65
    body = (
        binary[:counts] + bytes((binary[counts] & 0xC0 | 1, tag)) + binary[counts + 2 : counts + 8]
    )
    return body + hashlib.sha256(b"buraco-p2p/invite/v1" + body).digest()[:4]


def _recheck(binary: bytes, offset: int, value: int) -> bytes:
    """`binary` with one byte replaced and the checksum made right again."""
    body = binary[:offset] + bytes((value,)) + binary[offset + 1 : -4]
    return body + hashlib.sha256(b"buraco-p2p/invite/v1" + body).digest()[:4]


def _short_recheck(body: bytes) -> bytes:
    """A short code's `body` with its checksum made right (to reach the later checks)."""
    return body + hashlib.sha256(b"buraco-p2p/short/v1" + body).digest()[:2]


def shortcode_vector() -> Vector:
    """A short code (2.13), the short-code handshake on handshake.json's inputs, and the
    invite message the host sends first on that link."""
    from buraco_p2p.net.channel.handshake import SHORT_TABLE_ID
    from buraco_p2p.net.reach.shortcode import ShortCode, ShortCodeError, invite_message

    i = _inputs()
    invite = _invite()
    code = ShortCode(invite.addresses[0], i.room_secret)
    binary, text = code.to_bytes(), code.to_text()
    v6 = ShortCode(invite.addresses[1], i.room_secret)
    if ShortCode.from_text(text) != code or ShortCode.from_text(v6.to_text()) != v6:
        raise AssertionError("the short code vector does not round-trip")
    grouped = text.split("-")
    body = binary[:-2]
    port_0 = body[:5] + b"\x00\x00" + body[7:]
    position = len("BRS-") + 20  # inside the room secret
    typo = text[:position] + ("B" if text[position] != "B" else "C") + text[position + 1 :]
    refused = [
        {"name": "one character of the room secret changed", "text": typo},
        {"name": "checksum byte changed", "binary": (binary[:-1] + bytes((binary[-1] ^ 1,))).hex()},
        {"name": "version 2", "binary": _short_recheck(b"\x24" + body[1:]).hex()},
        {"name": "family 5", "binary": _short_recheck(b"\x15" + body[1:]).hex()},
        {"name": "port 0", "binary": _short_recheck(port_0).hex()},
        {"name": "last byte missing", "binary": binary[:-1].hex()},
        {"name": "a trailing byte", "binary": (binary + b"\x00").hex()},
        {"name": "text cut short", "text": text[:-3]},
        {"name": "a character outside base32", "text": text[:-1] + "1"},
    ]  # fmt: skip
    for case in refused:
        try:
            if "text" in case:
                ShortCode.from_text(case["text"])
            else:
                ShortCode.from_bytes(bytes.fromhex(case["binary"]))
        except ShortCodeError as exc:
            if case is refused[0] and "checksum" not in str(exc):
                raise AssertionError("the altered short code passed its checksum") from exc
            continue
        raise AssertionError(f"short code case {case['name']!r} is accepted")
    alice = Identity.from_seed(i.initiator_seed, INITIATOR_NICK)
    bob = Identity.from_seed(i.responder_seed, RESPONDER_NICK)
    init = InitiatorHandshake(
        alice, room_secret=i.room_secret, table_id=b"\x00", short=True,
        ephemeral=X25519PrivateKey.from_private_bytes(i.initiator_ephemeral),
    )  # fmt: skip
    resp = ResponderHandshake(
        bob, room_secret=i.room_secret, table_id=i.table_id,
        ephemeral=X25519PrivateKey.from_private_bytes(i.responder_ephemeral),
    )  # fmt: skip
    resp.accept_short = True
    m1 = init.start()
    m2 = resp.receive_init(_parse(m1))
    m3, result_i = init.receive_response(_parse(m2))
    result_r = resp.receive_finish(_parse(m3))
    if not (
        m1[5] == 0x04 and result_r.short
        and result_r.peer == alice.public and result_i.peer == bob.public
    ):  # fmt: skip
        raise AssertionError("the short-code handshake did not complete as specified")
    ready = SendCipher(result_r.send_key).seal(KIND_READY, b"")
    first = SendCipher(result_r.send_key)
    first.seal(KIND_READY, b"")
    message = codec.pack(invite_message(invite))
    frame = first.seal(KIND_DATA, message)
    return {
        "description": "a short code (docs/protocol.md section 2.13) for the first address of "
        "invite.json's invite, with an IPv6 one, text forms a reader accepts, inputs it refuses "
        "(each with ShortCodeError); then the short-code handshake run on handshake.json's "
        "inputs (INIT of kind 0x04, H0 over the fixed table id, the initiator pinning nobody), "
        "and the host's first two frames on that link: READY and the invite message.",
        "code": {
            "ip": str(code.endpoint.ip),
            "port": code.endpoint.port,
            "room_secret": i.room_secret.hex(),
            "binary": binary.hex(),
            "checksum": binary[-2:].hex(),
            "text": text,
        },
        "code_ipv6": {
            "ip": str(v6.endpoint.ip),
            "port": v6.endpoint.port,
            "binary": v6.to_bytes().hex(),
            "text": v6.to_text(),
        },
        "accepted_text_forms": [text.lower(), "".join(grouped), " ".join(grouped)],
        "refused": refused,
        "handshake": {
            "short_table_id": SHORT_TABLE_ID.hex(),
            "H0": _sha256(PROLOGUE_LABEL + bytes((len(SHORT_TABLE_ID),)) + SHORT_TABLE_ID).hex(),
            "m1": m1.hex(),
            "m2": m2.hex(),
            "m3": m3.hex(),
            "session_hash": result_r.session_hash.hex(),
            "k_ir": result_i.send_key.hex(),
            "k_ri": result_i.receive_key.hex(),
        },
        "host_frames": {
            "ready": ready.hex(),
            "invite_message": message.hex(),
            "invite_frame": frame.hex(),
        },
    }


# --- files ----------------------------------------------------------------------------------


def generate() -> dict[str, Vector]:
    """Every network vector file's content, by file name."""
    return {
        "codec.json": codec_vector(),
        "handshake.json": handshake_vector(),
        "frames.json": frames_vector(),
        "invite.json": invite_vector(),
        "identity_keys.json": identity_keys_vector(),
        "mesh.json": mesh_vector(),
        "candidates.json": candidates_vector(),
        "shortcode.json": shortcode_vector(),
    }


def main(argv: Sequence[str] | None = None) -> int:
    return vectorfiles.main(argv, generate=generate, prog="python -m protocol.gen.net")


if __name__ == "__main__":
    sys.exit(main())
