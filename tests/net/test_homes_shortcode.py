"""The short code of a host behind a NAT names its public address: the port its router maps,
else the address STUN saw; a LAN address means nothing to a joiner elsewhere. In the
namespace lab (natlab.py) the real `host --internet` behind a router that maps by PCP gives a
short code with which the real `join` in another home is seated. The lab test is skipped with
the reason where namespaces or nftables are unavailable."""

from __future__ import annotations

import secrets
import threading
from pathlib import Path

import pytest
import trio
from cli_helpers import read_until
from natlab import Lab, buraco_command, host_then_join, portmap_responder, unavailable

from buraco_p2p.net.reach.candidates import CandidateKind
from buraco_p2p.net.reach.invite import Endpoint, Invite
from buraco_p2p.net.reach.shortcode import ShortCode

REASON = unavailable()
LAN, V6 = Endpoint.parse("10.0.1.2", 4490), Endpoint.parse("2001:db8:1::2", 4490)
PUBLIC, OTHER = Endpoint.parse("198.51.100.11", 4490), Endpoint.parse("198.51.100.11", 5000)


def _invite(*candidates: tuple[Endpoint, CandidateKind]) -> Invite:
    return Invite(
        secrets.token_bytes(16), secrets.token_bytes(16), secrets.token_bytes(32),
        tuple(ep for ep, _ in candidates), kinds=tuple(int(k) for _, k in candidates),
    )  # fmt: skip


@pytest.mark.parametrize(
    ("candidates", "named"),
    [
        (((LAN, CandidateKind.HOST), (V6, CandidateKind.HOST)), LAN),
        (((V6, CandidateKind.HOST), (LAN, CandidateKind.HOST)), LAN),
        (((LAN, CandidateKind.HOST), (PUBLIC, CandidateKind.REFLEXIVE)), PUBLIC),
        (((LAN, CandidateKind.HOST), (OTHER, CandidateKind.REFLEXIVE),
          (PUBLIC, CandidateKind.MAPPED)), PUBLIC),
    ],
    ids=["lan-only", "ipv4-first", "reflexive", "mapped-over-reflexive"],
)  # fmt: skip
def test_the_short_code_names_the_public_address_where_there_is_one(
    candidates: tuple[tuple[Endpoint, CandidateKind], ...], named: Endpoint
) -> None:
    invite = _invite(*candidates)
    code = ShortCode.for_invite(invite)
    assert code is not None and code.endpoint == named
    assert ShortCode.from_text(code.to_text()) == code


@pytest.mark.skipif(REASON is not None, reason=REASON or "")
def test_a_joiner_in_another_home_is_seated_with_the_short_code(tmp_path: Path) -> None:
    with Lab() as lab:
        host_home, joiner_home = lab.add_home(), lab.add_home()
        stop = threading.Event()
        responder = portmap_responder(host_home, stop)

        def command(namespace: str, who: str, *args: str) -> list[str]:
            return buraco_command(namespace, tmp_path / who, *args, "--nick", who)

        async def seated(joiner: trio.Process, jout: list[bytes]) -> None:
            await read_until(joiner, jout, b"* seated", 60)

        host = command(host_home.namespace, "ana", "host", "--auto-approve", "--internet",
                       "--port", "4490")  # fmt: skip

        def join(short: str) -> list[str]:
            return command(joiner_home.namespace, "bia", "join", short)

        try:
            _host_out, joiner_out = trio.run(host_then_join, host, b"BRS-", join, seated)
        finally:
            stop.set()
            responder.join(10)
    assert f"asking the host at {host_home.public_ip}:4490" in joiner_out, joiner_out
    assert "short code accepted" in joiner_out
