"""Candidates say what they are, with the real `buraco-p2p host` and `join` in two homes of
the namespace lab (natlab.py): the host's router maps its port by PCP (the lab's responder)
and STUN then sees that same port, so the invite lists it once, as mapped; a joiner given
`--stun` prints no reply code (the host is reachable without one), and its `/who` says the
link to the host is "mapped", as the host says of its link to the joiner. Skipped with the
reason where namespaces or nftables are unavailable."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import trio
from cli_helpers import read_until
from natlab import Lab, buraco_command, host_then_join, portmap_responder, stun_lab, unavailable

from buraco_p2p.net.reach.candidates import CandidateKind
from buraco_p2p.net.reach.invite import Endpoint, Invite

REASON = unavailable()
pytestmark = pytest.mark.skipif(REASON is not None, reason=REASON or "")


@pytest.fixture
def lab() -> Iterator[Lab]:
    with stun_lab() as made:
        yield made


def test_a_mapped_port_is_listed_once_as_mapped_and_needs_no_reply_code(
    lab: Lab, tmp_path: Path
) -> None:
    host_home, joiner_home = lab.add_home(), lab.add_home()
    stop = threading.Event()
    responder = portmap_responder(host_home, stop)
    stun = [arg for ep in lab.stun_servers() for arg in ("--stun", f"{ep.host}:{ep.port}")]

    async def joined(joiner: trio.Process, jout: list[bytes]) -> None:
        await read_until(joiner, jout, b"* seated", 60)
        await read_until(joiner, jout, b"ana connected (", 60)
        assert joiner.stdin is not None
        await joiner.stdin.send_all(b"/who\n")
        with trio.fail_after(20):
            # the /who block is whole once its seat 2 line (after seat 1) is in
            while b"".join(jout).count(b"seat 2: bia (you)") < 2:
                assert joiner.stdout is not None
                jout.append(await joiner.stdout.receive_some(65536))

    def join(code: str) -> list[str]:
        return buraco_command(joiner_home.namespace, tmp_path / "bia", "join", code, "--nick",
                              "bia", *stun)  # fmt: skip

    host = buraco_command(host_home.namespace, tmp_path / "ana", "host", "--auto-approve",
                          "--internet", "--port", "4480", "--nick", "ana", *stun)  # fmt: skip

    try:
        host_out, joiner_out = trio.run(host_then_join, host, b"BRC-", join, joined)
    finally:
        stop.set()
        responder.join(10)
    code = next(line for line in host_out.splitlines() if line.startswith("BRC-"))
    invite = Invite.from_text(code)
    public = Endpoint.parse(host_home.public_ip, 4480)
    assert invite.addresses.count(public) == 1, invite.addresses
    kinds = dict(zip(invite.addresses, invite.kinds, strict=True))
    assert kinds[public] == CandidateKind.MAPPED, invite.kinds
    assert CandidateKind.REFLEXIVE not in invite.kinds, invite.kinds
    assert "the mapped port" in host_out, host_out
    assert "reply code" not in joiner_out, joiner_out
    assert "ana connected (mapped)" in joiner_out, joiner_out
    # The host says so too: the joiner came in through the port its router maps.
    assert "bia connected (mapped)" in host_out, host_out
    who = [line for line in joiner_out.splitlines() if "seat 1: ana" in line][-1]
    assert "[mapped]" in who, joiner_out
