"""A joiner that cannot reach the host says, after its first minute, why and what would help;
a host whose invite names only addresses inside its own network says so when it prints it
(a joiner that never got through has no seat and no path to the host, so the host is told up
front instead). The words for each kind of invite, and the real `host` and `join` in two
homes of the namespace lab (natlab.py; skipped with the reason where namespaces or nftables
are unavailable)."""

from __future__ import annotations

import secrets
from functools import partial
from pathlib import Path

import pytest
import trio
from cli_helpers import read_until
from natlab import Lab, buraco_command, host_then_join, unavailable

from buraco_p2p.net.mesh.internet import host_reach_note, unreachable_advice
from buraco_p2p.net.reach.candidates import CandidateKind, NatClass
from buraco_p2p.net.reach.invite import Endpoint, Invite

REASON = unavailable()
LAN = Endpoint.parse("10.0.1.2", 4510)
PUBLIC = Endpoint.parse("203.0.113.7", 4510)


def _invite(*candidates: tuple[Endpoint, CandidateKind], nat: NatClass = NatClass.UNKNOWN
            ) -> Invite:  # fmt: skip
    return Invite(
        secrets.token_bytes(16), secrets.token_bytes(16), secrets.token_bytes(32),
        tuple(ep for ep, _ in candidates), kinds=tuple(int(k) for _, k in candidates),
        nat_class=int(nat),
    )  # fmt: skip


@pytest.mark.parametrize(
    ("candidates", "nat", "reply", "says"),
    [
        (((LAN, CandidateKind.HOST),), NatClass.UNKNOWN, False,
         "only addresses inside the host's own network (10.0.1.2:4510)"),
        (((LAN, CandidateKind.HOST), (PUBLIC, CandidateKind.MAPPED)), NatClass.UNKNOWN, False,
         "the port the host's router maps"),
        (((LAN, CandidateKind.HOST), (PUBLIC, CandidateKind.REFLEXIVE)), NatClass.INDEPENDENT,
         False, "join with --stun IP:PORT to get a reply code"),
        (((LAN, CandidateKind.HOST), (PUBLIC, CandidateKind.REFLEXIVE)), NatClass.INDEPENDENT,
         True, "give the host the reply code printed above"),
        (((LAN, CandidateKind.HOST), (PUBLIC, CandidateKind.REFLEXIVE)), NatClass.RANDOM,
         False, "gives every destination a new port"),
        (((PUBLIC, CandidateKind.HOST),), NatClass.UNKNOWN, False, "a firewall"),
    ],
    ids=["lan-only", "mapped", "reflexive", "reflexive-code", "symmetric", "public"],
)  # fmt: skip
def test_a_joiner_is_told_why_and_what_would_help(
    candidates: tuple[tuple[Endpoint, CandidateKind], ...], nat: NatClass, reply: bool, says: str
) -> None:
    why, help_ = unreachable_advice(_invite(*candidates, nat=nat), reply_code=reply)
    assert says in why, why
    assert "port mapping" in help_ and "reply code" in help_ and "TURN" in help_


def test_the_host_is_told_when_its_invite_stays_inside_its_network() -> None:
    note = host_reach_note(_invite((LAN, CandidateKind.HOST)))
    assert note is not None and "players elsewhere cannot reach you" in note
    assert host_reach_note(_invite((LAN, CandidateKind.HOST), (PUBLIC, CandidateKind.MAPPED))) \
        is None  # fmt: skip


@pytest.mark.slow
@pytest.mark.skipif(REASON is not None, reason=REASON or "")
def test_a_joiner_in_another_home_says_why_after_a_minute(tmp_path: Path) -> None:
    with Lab() as lab:
        host_home, joiner_home = lab.add_home(), lab.add_home()

        def command(namespace: str, who: str, *args: str) -> list[str]:
            return buraco_command(namespace, tmp_path / who, *args, "--nick", who)

        async def told(joiner: trio.Process, jout: list[bytes]) -> None:
            await read_until(joiner, jout, b"what would help", 150)
            await read_until(joiner, jout, b"\n", 10)

        host = command(host_home.namespace, "ana", "host", "--listen", "0.0.0.0",
                       "--port", "4510")  # fmt: skip

        def join(code: str) -> list[str]:
            return command(joiner_home.namespace, "bia", "join", code)

        _host_out, joiner_out = trio.run(
            partial(host_then_join, printed=b"inside your network"), host, b"BRC-", join, told
        )
    assert "has not answered for a minute" in joiner_out, joiner_out
    assert "only addresses inside the host's own network" in joiner_out, joiner_out
    assert joiner_out.count("what would help") == 1
