"""Candidates, NAT classes, STUN messages and punch timing: the parts that need no network."""

from __future__ import annotations

import hmac
import ipaddress
import json
import secrets
from pathlib import Path

import pytest

from buraco_p2p.net.channel.identity import Identity
from buraco_p2p.net.reach import invite as invite_module
from buraco_p2p.net.reach.candidates import (
    Candidate,
    CandidateKind,
    NatClass,
    _ipv6_from_proc,
    classify,
    order_addresses,
)
from buraco_p2p.net.reach.invite import Endpoint, Invite, InviteFormatError
from buraco_p2p.net.reach.punch import start_delays
from buraco_p2p.net.reach.reply import ReplyCode, ReplyCodeError
from buraco_p2p.net.reach.stun import (
    ATTR_XOR_MAPPED_ADDRESS,
    BINDING_SUCCESS,
    StunError,
    StunMessage,
    binding_request,
    binding_response,
    mapped_from_response,
)

ip = ipaddress.ip_address


def test_loopback_is_left_out_unless_it_is_all_there_is() -> None:
    found = order_addresses([ip("127.0.0.1"), ip("192.168.1.5"), ip("::1")], frozenset())
    assert found == [ip("192.168.1.5")]
    assert order_addresses([ip("127.0.0.1"), ip("::1")], frozenset()) == [
        ip("127.0.0.1"), ip("::1"),
    ]


def test_temporary_ipv6_comes_before_the_stable_one_and_link_local_is_dropped() -> None:
    stable, temp = ip("2001:db8::211:22ff:fe33:4455"), ip("2001:db8::9a3c:11d2:7e01:5b2a")
    found = order_addresses([stable, ip("fe80::1"), temp, ip("10.0.0.2")], frozenset({temp}))
    assert found == [ip("10.0.0.2"), temp, stable]


def test_proc_if_inet6_flags_mark_temporary_and_skip_tentative() -> None:
    text = (
        "20010db8000000009a3c11d27e015b2a 02 40 00 01   eth0\n"
        "20010db8000000000211 22ff fe334455\n"  # malformed: ignored
        "20010db8000000000211000000000001 02 40 00 40   eth0\n"  # tentative
        "20010db8000000000211000000000002 02 40 00 00   eth0\n"
    )
    found = {(str(a.ip), a.temporary) for a in _ipv6_from_proc(text)}
    assert found == {("2001:db8::9a3c:11d2:7e01:5b2a", True), ("2001:db8::211:0:0:2", False)}


@pytest.mark.parametrize(
    ("first", "second", "expected"),
    [
        (("198.51.100.7", 4000), ("198.51.100.7", 4000), NatClass.INDEPENDENT),
        (("198.51.100.7", 4000), ("198.51.100.7", 4001), NatClass.RANDOM),
        (("198.51.100.7", 4000), ("198.51.100.8", 4000), NatClass.RANDOM),
        (("10.0.0.2", 4000), ("10.0.0.2", 4000), NatClass.OPEN),
    ],
)
def test_nat_class_from_two_answers(
    first: tuple[str, int], second: tuple[str, int], expected: NatClass
) -> None:
    got = classify([ip("10.0.0.2")], Endpoint.parse(*first), Endpoint.parse(*second))
    assert got is expected
    assert got.punchable == (expected in (NatClass.OPEN, NatClass.INDEPENDENT))


def test_stun_xor_mapped_address_round_trips_both_families() -> None:
    for observed in (Endpoint.parse("198.51.100.7", 40400), Endpoint.parse("2001:db8::7", 1)):
        request = binding_request()
        wire = binding_response(request, observed).to_bytes()
        assert mapped_from_response(wire, request.transaction) == observed


def test_rfc5769_ipv4_response_vector_decodes() -> None:
    # RFC 5769 section 2.2 without its SOFTWARE, MESSAGE-INTEGRITY and FINGERPRINT:
    # XOR-MAPPED-ADDRESS for 192.0.2.1:32853, transaction b7e7a701bc34d686fa87dfae.
    transaction = bytes.fromhex("b7e7a701bc34d686fa87dfae")
    value = bytes.fromhex("0001a147e112a643")
    wire = StunMessage(BINDING_SUCCESS, transaction, ((ATTR_XOR_MAPPED_ADDRESS, value),))
    got = mapped_from_response(wire.to_bytes(), transaction)
    assert got == Endpoint.parse("192.0.2.1", 32853)


def test_stun_answers_that_are_not_ours_are_refused() -> None:
    request = binding_request()
    good = binding_response(request, Endpoint.parse("198.51.100.7", 9)).to_bytes()
    with pytest.raises(StunError, match="another transaction"):
        mapped_from_response(good, secrets.token_bytes(12))
    with pytest.raises(StunError, match="magic cookie"):
        mapped_from_response(good[:4] + b"\0\0\0\0" + good[8:], request.transaction)
    with pytest.raises(StunError, match="length"):
        mapped_from_response(good[:-1], request.transaction)
    with pytest.raises(StunError, match="at least"):
        mapped_from_response(good[:10], request.transaction)
    bare = StunMessage(BINDING_SUCCESS, request.transaction, ()).to_bytes()
    with pytest.raises(StunError, match="without XOR-MAPPED-ADDRESS"):
        mapped_from_response(bare, request.transaction)


def test_punch_start_delays_are_half_the_round_trip_difference() -> None:
    d = start_delays(0.180, 0.040)
    assert d.first == 0.0 and d.second == pytest.approx(0.070)
    d = start_delays(0.010, 0.050)
    assert d.first == pytest.approx(0.020) and d.second == 0.0
    with pytest.raises(ValueError):
        start_delays(-1, 0)


def _invite(kinds: tuple[int, ...], nat: int) -> Invite:
    addresses = (Endpoint.parse("10.0.0.2", 4464), Endpoint.parse("198.51.100.7", 4464))
    key = Identity.generate("ana").public.raw
    return Invite(bytes(16), bytes(range(16)), key, addresses, kinds=kinds, nat_class=nat)


def test_invite_carries_candidate_kinds_and_nat_class() -> None:
    invite = _invite((CandidateKind.HOST, CandidateKind.REFLEXIVE), NatClass.INDEPENDENT)
    again = Invite.from_text(invite.to_text())
    assert again == invite
    assert again.kinds == (0, 2) and again.nat_class == 2


def test_invite_without_candidate_information_is_unchanged_on_the_wire() -> None:
    plain = _invite((), 0)
    assert plain.kinds == (0, 0)
    data = plain.to_bytes()
    assert data[65] == 2 and data[66] == 4  # counts byte, then the first family byte
    tagged = _invite((1, 2), 3).to_bytes()
    assert tagged[65] == 3 << 6 | 2 and tagged[66] == 1 << 4 | 4 and tagged[73] == 2 << 4 | 4


def test_invite_refuses_unknown_kinds_and_classes() -> None:
    with pytest.raises(InviteFormatError):
        _invite((0, 4), 0)
    with pytest.raises(InviteFormatError):
        _invite((0,), 0)
    with pytest.raises(InviteFormatError):
        _invite((0, 0), 4)


VECTORS = json.loads(
    (Path(__file__).resolve().parents[2] / "protocol" / "vectors" / "candidates.json").read_text()
)


def test_candidates_vector_invite_decodes_to_its_fields() -> None:
    v = VECTORS["invite"]
    invite = Invite.from_bytes(bytes.fromhex(v["binary"]))
    assert Invite.from_text(v["text"]) == invite
    assert list(invite.kinds) == v["kinds"] and invite.nat_class == v["nat_class"]
    assert [{"ip": str(e.ip), "port": e.port} for e in invite.addresses] == v["addresses"]
    for bad in VECTORS["refused"]:
        with pytest.raises(getattr(invite_module, bad["error"])):
            Invite.from_bytes(bytes.fromhex(bad["binary"]))


def test_candidates_vector_stun_bytes_follow_rfc_8489() -> None:
    v = VECTORS["stun"]
    transaction = bytes.fromhex(v["transaction"])
    assert bytes.fromhex(v["request"]) == bytes.fromhex("00010000" "2112a442") + transaction
    for case in v["responses"]:
        got = mapped_from_response(bytes.fromhex(case["response"]), transaction)
        assert {"ip": str(got.ip), "port": got.port} == case["observed"]


def test_candidates_vector_punch_delays() -> None:
    for case in VECTORS["punch_delays"]:
        d = start_delays(case["rtt_a_ms"] / 1000, case["rtt_b_ms"] / 1000)
        assert d.first * 1000 == pytest.approx(case["delay_a_ms"])
        assert d.second * 1000 == pytest.approx(case["delay_b_ms"])


SECRET, TABLE = bytes(range(16)), bytes(range(16, 32))


def _reply() -> ReplyCode:
    return ReplyCode(
        (
            Candidate(CandidateKind.REFLEXIVE, Endpoint.parse("198.51.100.12", 40400)),
            Candidate(CandidateKind.HOST, Endpoint.parse("2001:db8:2::2", 40400)),
        ),
        NatClass.INDEPENDENT,
    )


def test_reply_code_round_trips_and_is_short() -> None:
    code = _reply()
    text = code.to_text(SECRET, TABLE)
    assert text.startswith("BRR-") and len(text) < 80
    assert ReplyCode.from_text(text.lower().replace("-", " "), SECRET, TABLE) == code
    one = ReplyCode((code.candidates[0],), NatClass.INDEPENDENT).to_text(SECRET, TABLE)
    assert len(one) <= 40  # one IPv4 candidate: 28 characters, readable over the phone


def test_reply_code_for_another_table_or_altered_is_refused() -> None:
    text = _reply().to_text(SECRET, TABLE)
    with pytest.raises(ReplyCodeError, match="does not belong"):
        ReplyCode.from_text(text, bytes(16), TABLE)
    with pytest.raises(ReplyCodeError, match="does not belong"):
        ReplyCode.from_text(text, SECRET, bytes(16))
    swapped = text[:6] + ("A" if text[6] != "A" else "B") + text[7:]
    with pytest.raises(ReplyCodeError):
        ReplyCode.from_text(swapped, SECRET, TABLE)
    with pytest.raises(ReplyCodeError, match="truncated"):
        ReplyCode.from_text("BRR-AEAQ", SECRET, TABLE)
    with pytest.raises(ReplyCodeError, match="BRR"):
        ReplyCode.from_text("BRC-" + text[4:], SECRET, TABLE)
    with pytest.raises(ReplyCodeError, match="outside base32"):
        ReplyCode.from_text(text[:-1] + "1", SECRET, TABLE)


def test_reply_code_with_a_valid_tag_but_bad_contents_is_refused() -> None:
    from buraco_p2p.net.reach.reply import _tag

    for body, reason in [
        (bytes((1, 0x82, 0x44)) + bytes(6), "unknown candidate tag"),
        (bytes((1, 0x83, 0x24)) + bytes(5) + b"\1", "more candidates"),
        (bytes((1, 0x81, 0x24)) + bytes(5) + b"\1\0", "unexpected bytes"),
        (bytes((1, 0x81, 0x24)) + bytes(6), "port 0"),
    ]:
        with pytest.raises(ReplyCodeError, match=reason):
            ReplyCode.from_bytes(body + _tag(SECRET, TABLE, body), SECRET, TABLE)


def test_candidates_vector_reply_code_and_its_refusals() -> None:
    v = VECTORS["reply_code"]
    invite = json.loads(
        (Path(__file__).resolve().parents[2] / "protocol" / "vectors" / "invite.json").read_text()
    )["invite"]
    secret, table = bytes.fromhex(invite["room_secret"]), bytes.fromhex(invite["table_id"])
    binary = bytes.fromhex(v["binary"])
    body = binary[:-8]
    expected_tag = hmac.new(secret, b"buraco-p2p/reply/v1" + table + body, "sha256").digest()[:8]
    assert binary[-8:] == expected_tag == bytes.fromhex(v["tag"])
    code = ReplyCode.from_text(v["text"], secret, table)
    assert ReplyCode.from_bytes(binary, secret, table) == code
    got = [{"kind": int(c.kind), "ip": str(c.endpoint.ip), "port": c.endpoint.port}
           for c in code.candidates]  # fmt: skip
    assert got == v["candidates"] and code.nat_class == v["nat_class"]
    for bad in v["refused"]:
        with pytest.raises(ReplyCodeError, match="does not belong"):
            ReplyCode.from_bytes(bytes.fromhex(bad["binary"]), secret, table)


def test_stun_servers_are_numeric_and_named_by_the_user() -> None:
    from buraco_p2p.net.mesh.internet import StunServerError, contact_line, parse_stun_server

    assert parse_stun_server("192.0.2.5") == Endpoint.parse("192.0.2.5", 3478)
    assert parse_stun_server("192.0.2.5:19302") == Endpoint.parse("192.0.2.5", 19302)
    assert parse_stun_server("[2001:db8::5]:9") == Endpoint.parse("2001:db8::5", 9)
    assert parse_stun_server("2001:db8::5") == Endpoint.parse("2001:db8::5", 3478)
    for bad in ("stun.example.org:3478", "192.0.2.5:0", "192.0.2.5:x", "[2001:db8::5", "[::1]x"):
        with pytest.raises(StunServerError, match="--stun"):
            parse_stun_server(bad)
    two = [parse_stun_server("192.0.2.5"), parse_stun_server("192.0.2.6:1")]
    line = contact_line(True, False, two)
    assert line == (
        "* will contact your router (a port mapping: PCP/NAT-PMP to the default gateway, then "
        "UPnP, which is multicast on your local network) and the STUN servers 192.0.2.5:3478, "
        "192.0.2.6:1; nothing else"
    )
    assert "no STUN server" in contact_line(True, False, [])
    assert "router" not in contact_line(False, False, two[:1])


def test_port_mapping_messages_and_the_default_gateway() -> None:
    from buraco_p2p.net.reach.portmap import (
        PortMapError,
        default_gateway,
        natpmp_map_request,
        parse_natpmp_address,
        parse_natpmp_map,
        parse_pcp_map_response,
        pcp_map_request,
    )

    route = (
        "Iface\tDestination\tGateway \tFlags\n"
        "eth0\t0001A8C0\t00000000\t0001\n"
        "eth0\t00000000\t0101A8C0\t0003\n"
    )
    assert str(default_gateway(route)) == "192.168.1.1"
    assert default_gateway("Iface\n") is None
    nonce = bytes(range(12))
    request = pcp_map_request(ipaddress.IPv4Address("192.168.1.5"), 4464, nonce)
    assert len(request) == 60 and request[:2] == b"\x02\x01"
    assert request[8:24] == bytes(10) + b"\xff\xff" + bytes((192, 168, 1, 5))
    assert request[24:36] == nonce and request[36] == 6 and request[40:44] == b"\x11\x70\x11\x70"
    answer = (
        bytes((2, 0x81, 0, 0)) + (7200).to_bytes(4, "big") + bytes(16) + nonce
        + bytes((6, 0, 0, 0)) + b"\x11\x70\x11\x71" + bytes(10) + b"\xff\xff"
        + bytes((198, 51, 100, 7))
    )  # fmt: skip
    mapping = parse_pcp_map_response(answer, nonce)
    assert mapping.protocol == "PCP" and mapping.external == Endpoint.parse("198.51.100.7", 4465)
    with pytest.raises(PortMapError, match="another request"):
        parse_pcp_map_response(answer, bytes(12))
    with pytest.raises(PortMapError, match="refused"):
        parse_pcp_map_response(answer[:3] + b"\x02" + answer[4:], nonce)
    with pytest.raises(PortMapError, match="NAT-PMP"):
        parse_pcp_map_response(bytes((0, 0x81, 0, 1, 0, 0, 0, 1)), nonce)
    assert natpmp_map_request(4464) == bytes((0, 2, 0, 0, 0x11, 0x70, 0x11, 0x70, 0, 0, 0x1C, 0x20))
    public = parse_natpmp_address(bytes((0, 128, 0, 0, 0, 0, 0, 1, 198, 51, 100, 7)))
    granted = bytes((0, 130, 0, 0, 0, 0, 0, 1, 0x11, 0x70, 0x11, 0x70, 0, 0, 0x1C, 0x20))
    got = parse_natpmp_map(granted, public)
    assert got.external == Endpoint.parse("198.51.100.7", 4464)
    with pytest.raises(PortMapError, match="refused"):
        parse_natpmp_map(bytes((0, 130, 0, 2)) + bytes(12), public)


def test_how_a_link_was_made_in_a_players_words() -> None:
    from buraco_p2p.net.reach.candidates import describe_link

    def say(**kw: object) -> str:
        args: dict[str, object] = {"relayed": False, "punched": False, "remote": None,
                                   "remote_kind": None}  # fmt: skip
        args.update(kw)
        return describe_link(**args)  # type: ignore[arg-type]

    assert say(relayed=True, punched=True) == "relayed by the host"
    assert say(remote=ip("198.51.100.7"), remote_kind=CandidateKind.MAPPED) == "mapped"
    assert say(remote=ip("2606:4700::1")) == "direct (IPv6)"
    assert say(remote=ip("198.51.100.7"), punched=True) == "direct (punched)"
    assert say(remote=ip("198.51.100.7"), remote_kind=CandidateKind.REFLEXIVE) == "direct (punched)"
    assert say(remote=ip("192.168.1.4")) == "direct"
