"""Identity keys: small-order and non-canonical Ed25519 encodings are refused everywhere.

Under a small-order key, one fixed signature (R = the neutral point, S = 0) verifies for
every message: the first test shows that signature verification alone accepts it, the
others that no identity key with such an encoding gets past `PeerKey`, the handshake, a
roster, an invite or the relay records.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
import trio
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from buraco_p2p.net.channel.edwards import check_identity_key
from buraco_p2p.net.channel.errors import HandshakeError, MeshError
from buraco_p2p.net.channel.framing import Frame, FrameReader
from buraco_p2p.net.channel.handshake import InitiatorHandshake, ResponderHandshake
from buraco_p2p.net.channel.identity import Identity, PeerKey
from buraco_p2p.net.mesh.relay import RelayError, parse_relay
from buraco_p2p.net.mesh.startup import join_table
from buraco_p2p.net.reach.invite import Invite
from buraco_p2p.net.table.table import Roster, RosterError

# The eight points of order 1, 2, 4 and 8, in their canonical encodings.
SMALL_ORDER = [
    "0100000000000000000000000000000000000000000000000000000000000000",  # order 1
    "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",  # order 2
    "0000000000000000000000000000000000000000000000000000000000000000",  # order 4
    "0000000000000000000000000000000000000000000000000000000000000080",  # order 4
    "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a",  # order 8
    "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa",  # order 8
    "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05",  # order 8
    "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85",  # order 8
]
NON_CANONICAL = [
    # y = p + 1 (the neutral point again), y = p (an order-4 point), y = 2^255 - 1.
    "eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
    "edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
    "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
    # x = 0 with the sign bit set: the neutral point and the order-2 point.
    "0100000000000000000000000000000000000000000000000000000000000080",
    "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
]
UNIVERSAL_SIGNATURE = bytes.fromhex("01" + "00" * 63)  # R = neutral point, S = 0


def parse_frame(data: bytes) -> Frame:
    reader = FrameReader(4096)
    reader.feed(data)
    frame = reader.next_frame()
    assert frame is not None
    return frame


def mixed_order_key() -> bytes:
    """An honest key plus a point of order 2: on the curve, canonical, not of order L."""
    from buraco_p2p.net.channel import edwards

    honest = Identity.generate("x").public.raw
    x, y = edwards._decode(honest)
    point = edwards._add((x, y, 1, x * y % edwards._P), (0, edwards._P - 1, 1, 0))
    px, py, pz, _ = point
    zi = pow(pz, edwards._P - 2, edwards._P)
    ax, ay = px * zi % edwards._P, py * zi % edwards._P
    return (ay | ((ax & 1) << 255)).to_bytes(32, "little")


def test_signature_verification_alone_accepts_one_signature_for_everything() -> None:
    key = Ed25519PublicKey.from_public_bytes(bytes.fromhex(SMALL_ORDER[0]))
    for message in (b"", b"seat 1 is mine", b"any log entry at all"):
        key.verify(UNIVERSAL_SIGNATURE, message)  # no exception: this is the hole


@pytest.mark.parametrize("hexkey", SMALL_ORDER)
def test_each_small_order_point_is_refused(hexkey: str) -> None:
    with pytest.raises(ValueError, match="small-order"):
        PeerKey(bytes.fromhex(hexkey))


@pytest.mark.parametrize("hexkey", NON_CANONICAL)
def test_non_canonical_encodings_are_refused(hexkey: str) -> None:
    with pytest.raises(ValueError, match="canonical"):
        PeerKey(bytes.fromhex(hexkey))


def test_off_curve_and_mixed_order_keys_are_refused() -> None:
    with pytest.raises(ValueError, match="not a point of the curve"):
        PeerKey(bytes.fromhex("02" + "00" * 31))
    with pytest.raises(ValueError, match="small-order component"):
        PeerKey(mixed_order_key())


def test_honest_keys_are_accepted() -> None:
    for _ in range(20):
        raw = Identity.generate("x").public.raw
        check_identity_key(raw)
        assert PeerKey(raw).raw == raw


@dataclass
class _RawPublic:
    raw: bytes


@dataclass
class SmallOrderImpostor:
    """Claims the neutral point as its identity and signs everything with one signature."""

    nickname: str = "eve"
    public: Any = None

    def __post_init__(self) -> None:
        self.public = _RawPublic(bytes.fromhex(SMALL_ORDER[0]))

    def sign(self, data: bytes) -> bytes:
        return UNIVERSAL_SIGNATURE


def test_the_handshake_refuses_a_small_order_identity_in_both_roles() -> None:
    room, table = bytes(range(16)), b"T" * 16
    bob = Identity.generate("bob")
    eve: Any = SmallOrderImpostor()
    init = InitiatorHandshake(eve, room_secret=room, table_id=table)
    resp = ResponderHandshake(bob, room_secret=room, table_id=table)
    m2 = resp.receive_init(parse_frame(init.start()))
    m3, _ = init.receive_response(parse_frame(m2))
    with pytest.raises(HandshakeError, match="small-order"):
        resp.receive_finish(parse_frame(m3))

    init2 = InitiatorHandshake(bob, room_secret=room, table_id=table)
    resp2 = ResponderHandshake(eve, room_secret=room, table_id=table)
    m2 = resp2.receive_init(parse_frame(init2.start()))
    with pytest.raises(HandshakeError, match="small-order"):
        init2.receive_response(parse_frame(m2))


def test_a_roster_naming_a_small_order_key_is_refused() -> None:
    host = Identity.generate("ana").public.raw
    for hexkey in SMALL_ORDER + NON_CANONICAL:
        wire = {
            "table": bytes(16),
            "version": 1,
            "members": [
                {"seat": 0, "key": host, "nick": "ana", "addrs": []},
                {"seat": 1, "key": bytes.fromhex(hexkey), "nick": "eve", "addrs": []},
            ],
        }
        with pytest.raises(RosterError):
            Roster.from_wire(wire, "host")


def test_relay_records_naming_a_small_order_key_are_refused() -> None:
    for hexkey in SMALL_ORDER:
        with pytest.raises(RelayError, match="invalid key"):
            parse_relay(["ro", bytes.fromhex(hexkey), 1], "bia")


async def test_an_invite_naming_a_small_order_host_is_refused_before_dialing() -> None:
    for hexkey in SMALL_ORDER:
        invite = Invite(bytes(16), bytes(16), bytes.fromhex(hexkey), ())
        with pytest.raises(MeshError, match="host key is refused"), trio.fail_after(5):
            async with join_table(Identity.generate("bia"), invite):
                pass
