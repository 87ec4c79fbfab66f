"""Homes behind a provider's carrier-grade NAT: a lab whose internet is the shared address space
of RFC 6598 (100.64.0.0/24 of 100.64.0.0/10), not private and not public, with its STUN
responders and a TURN server (coturn) inside it, as a provider's network has them.

The real `host` (behind a symmetric NAT: `--stun S1 --stun S2 --turn ...`) and `join` (behind
a cone NAT: `--stun S1 --stun S2`) form a table, and every word says what is true: the host's
address is in its provider's shared space (not "inside your network", not "public"); its relay
serves the players no punch reaches (not "only through a port mapping"); the relay's shared
address stays a relayed candidate; the joiner is told its reply code must be pasted; each side
names the link as through TURN; the empty roster is shown once. Skipped with the reason where
namespaces, nftables or coturn are unavailable.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import trio
from cli_helpers import ENV, kill_leftovers, line_starting, read_until
from natlab import (
    TURN_PASSWORD,
    TURN_PORT,
    TURN_USER,
    buraco_command,
    lab_turn,
    stun_lab,
    turn_unavailable,
    unavailable,
)

from buraco_p2p.net.reach.candidates import CandidateKind
from buraco_p2p.net.reach.invite import Invite

REASON = unavailable() or turn_unavailable()
pytestmark = [pytest.mark.netns, pytest.mark.skipif(REASON is not None, reason=REASON or "")]
NET = "100.64.0"
VIA_TURN = f"relayed (TURN {NET}.4)"


def test_a_table_in_a_providers_shared_space_forms_with_the_right_words(tmp_path: Path) -> None:
    with stun_lab(NET) as lab, lab_turn(lab, tmp_path / "coturn") as turn:
        host_home, joiner_home = lab.add_home(symmetric=True), lab.add_home()
        stun = [a for ep in lab.stun_servers() for a in ("--stun", f"{ep.host}:{ep.port}")]
        relay = ["--turn", f"{TURN_USER}:{TURN_PASSWORD}@{turn.host}:{TURN_PORT}"]
        host = buraco_command(host_home.namespace, tmp_path / "ana", "host", "--auto-approve",
                              "--players", "2", "--listen", "0.0.0.0", "--port", "4490",
                              "--nick", "ana", *stun, *relay)  # fmt: skip

        def join(code: str) -> list[str]:
            return buraco_command(joiner_home.namespace, tmp_path / "bia", "join", code,
                                  "--nick", "bia", "--listen", "0.0.0.0", *stun)  # fmt: skip

        host_out, joiner_out = trio.run(_table, host, join)

    # The host: its address is its provider's, and its relay serves whom no punch reaches.
    assert f"* address {NET}.11:" in host_out and "shared address space" in host_out, host_out
    assert "only through a port mapping" not in host_out, host_out
    assert "reach you through your TURN relay" in host_out, host_out
    assert "inside your network" not in host_out, host_out
    assert "is in your provider's shared address space" in host_out, host_out
    code = next(line for line in host_out.splitlines() if line.startswith("BRC-"))
    kinds = dict(zip(Invite.from_text(code).addresses, Invite.from_text(code).kinds, strict=True))
    relayed = [ep for ep, k in kinds.items() if k == CandidateKind.RELAYED]
    assert len(relayed) == 1 and str(relayed[0].ip) == f"{NET}.4", kinds  # still relayed
    assert host_out.count("* seated (1/2)") == 1, host_out  # the empty roster, once
    assert f"bia connected ({VIA_TURN})" in host_out, host_out
    # The joiner: told its code must be pasted at a TURN host, and how its link runs.
    assert "lets in only players whose reply code the host has pasted" in joiner_out, joiner_out
    assert f"ana connected ({VIA_TURN})" in joiner_out, joiner_out
    assert "reply code refused" not in host_out, host_out


async def _table(host: list[str], join: Callable[[str], list[str]]) -> tuple[str, str]:
    """The host, then the joiner with the host's invite; the joiner's reply code pasted at the
    host; until each says the other connected. What each printed."""
    hproc = await trio.lowlevel.open_process(host, stdin=-1, stdout=-1, env=ENV)
    jproc: trio.Process | None = None
    hout: list[bytes] = []
    jout: list[bytes] = []
    try:
        code = await line_starting(hproc, hout, "BRC-", 60)
        jproc = await trio.lowlevel.open_process(join(code), stdin=-1, stdout=-1, env=ENV)
        reply = await line_starting(jproc, jout, "BRR-", 60)
        assert hproc.stdin is not None
        await hproc.stdin.send_all(reply.encode() + b"\n")
        await read_until(jproc, jout, b"ana connected (", 60)
        await read_until(jproc, jout, b"\n", 10)
        await read_until(hproc, hout, b"bia connected (", 60)
        await read_until(hproc, hout, b"\n", 10)
    finally:
        await kill_leftovers([p for p in (hproc, jproc) if p is not None])
    return b"".join(hout).decode(), b"".join(jout).decode()
