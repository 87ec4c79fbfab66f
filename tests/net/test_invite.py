"""Invite codes: round trips, tolerance of copy-paste damage, and clear errors."""

from __future__ import annotations

import base64
import ipaddress

import pytest
from hypothesis import given
from hypothesis import strategies as st

from buraco_p2p.net.channel.errors import NetError
from buraco_p2p.net.reach.invite import (
    Endpoint,
    Invite,
    InviteChecksumError,
    InviteError,
    InviteFormatError,
    InviteTruncatedError,
    InviteVersionError,
)

endpoints = st.builds(
    Endpoint,
    st.one_of(
        st.ip_addresses(v=4).map(ipaddress.IPv4Address),
        st.ip_addresses(v=6).map(ipaddress.IPv6Address),
    ),
    st.integers(1, 65535),
)
invites = st.builds(
    Invite,
    st.binary(min_size=16, max_size=16),
    st.binary(min_size=16, max_size=16),
    st.binary(min_size=32, max_size=32),
    st.lists(endpoints, max_size=16).map(tuple),
)


def sample() -> Invite:
    return Invite(
        table_id=bytes(range(16)),
        room_secret=bytes(range(16, 32)),
        host_key=bytes(range(32, 64)),
        addresses=(
            Endpoint.parse("192.168.1.20", 47100),
            Endpoint.parse("fe80::1", 47100),
            Endpoint.parse("203.0.113.7", 61000),
        ),
    )


@given(invites)
def test_round_trip_text_and_bytes(invite: Invite) -> None:
    assert Invite.from_text(invite.to_text()) == invite
    assert Invite.from_bytes(invite.to_bytes()) == invite


def test_text_form_is_grouped_and_tolerant_of_paste_damage() -> None:
    invite = sample()
    text = invite.to_text()
    assert text.startswith("BRC-")
    assert all(len(group) <= 5 for group in text.split("-"))
    mangled = "  " + text.lower().replace("-", " -\n ") + "\t"
    assert Invite.from_text(mangled) == invite


def test_every_single_character_change_is_detected() -> None:
    text = sample().to_text()
    body_positions = [i for i, ch in enumerate(text) if ch != "-" and i >= 4]
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
    for i in body_positions:
        replacement = alphabet[(alphabet.index(text[i]) + 7) % 32]
        changed = text[:i] + replacement + text[i + 1 :]
        with pytest.raises(InviteError):
            Invite.from_text(changed)


def test_bad_checksum_is_named() -> None:
    data = bytearray(sample().to_bytes())
    data[20] ^= 0x01  # inside the room secret: structure intact, checksum wrong
    with pytest.raises(InviteChecksumError, match="checksum"):
        Invite.from_bytes(bytes(data))


def test_wrong_version_is_named() -> None:
    data = bytearray(sample().to_bytes())
    data[0] = 2
    with pytest.raises(InviteVersionError, match="version 2"):
        Invite.from_bytes(bytes(data))


@pytest.mark.parametrize("keep", [1, 10, 65, 70, 80])
def test_truncation_is_named(keep: int) -> None:
    data = sample().to_bytes()
    assert keep < len(data)
    with pytest.raises(InviteTruncatedError, match="truncated"):
        Invite.from_bytes(data[:keep])


def test_truncated_text_is_named() -> None:
    text = sample().to_text()
    with pytest.raises(InviteTruncatedError):
        Invite.from_text(text[: len(text) // 2])


def test_trailing_bytes_and_garbage_are_format_errors() -> None:
    data = sample().to_bytes()
    with pytest.raises(InviteFormatError, match="trailing"):
        b32 = base64.b32encode(data + b"\x00\x00\x00\x00\x00").decode().rstrip("=")
        Invite.from_text("BRC-" + b32)
    with pytest.raises(InviteFormatError, match="BRC"):
        Invite.from_text("hello world")
    with pytest.raises(InviteFormatError, match="characters"):
        Invite.from_text("BRC-ABCD1-EFGH8")
    with pytest.raises(InviteFormatError):
        Invite.from_text("BRC-" + "A" * 100_000)
    with pytest.raises(InviteTruncatedError):
        Invite.from_text("BRC-")


def test_unknown_address_family_is_rejected() -> None:
    # Re-checksummed so that only the family byte is wrong.
    import hashlib

    body = bytearray(sample().to_bytes()[:-4])
    body[66] = 5
    # With family 5 the parser reads 16 ip bytes, so pad the record to keep it consistent.
    body = body[:67] + bytes(12) + body[67:]
    body = body[: 66 + 1 + 16 + 2] + body[66 + 1 + 4 + 12 + 2 :]
    check = hashlib.sha256(b"buraco-p2p/invite/v1" + bytes(body)).digest()[:4]
    with pytest.raises(InviteFormatError, match="family"):
        Invite.from_bytes(bytes(body) + check)


def test_errors_are_net_and_value_errors() -> None:
    assert issubclass(InviteError, NetError)
    assert issubclass(InviteError, ValueError)
    with pytest.raises(InviteFormatError, match="port"):
        Endpoint.parse("127.0.0.1", 0)
    with pytest.raises(InviteFormatError, match="numeric"):
        Endpoint.parse("example.com", 80)
