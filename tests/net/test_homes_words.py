"""Honest words from the real `buraco-p2p host` in a home of the namespace lab (natlab.py):
a router that refuses a PCP mapping is named with the result in words; with no UPnP device
at all the host says so (not "refused: Success") and prints its invite before UPnP discovery
ends; `host --bots N --internet --stun` maps the port and asks STUN as it does without bots.
Skipped with the reason where namespaces or nftables (or, for UPnP, miniupnpc) are
unavailable."""

from __future__ import annotations

import importlib.util
import signal
import struct
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import trio
from cli_helpers import ENV, kill_leftovers, read_until
from natlab import (
    Home,
    InNamespace,
    Lab,
    buraco_command,
    portmap_responder,
    router_responder,
    stun_lab,
    unavailable,
)

from buraco_p2p.net.reach.candidates import CandidateKind
from buraco_p2p.net.reach.invite import Endpoint, Invite

REASON = unavailable()
pytestmark = pytest.mark.skipif(REASON is not None, reason=REASON or "")


@pytest.fixture
def lab() -> Iterator[Lab]:
    with stun_lab() as made:
        yield made


def _host(home: Home, tmp_path: Path, *args: str) -> list[str]:
    return buraco_command(home.namespace, tmp_path, "host", "--nick", "ana", *args)


def _output_until(command: list[str], needle: bytes, timeout: float = 60) -> str:
    """What the host printed up to `needle` and the end of that line; then it is ended by
    SIGTERM (as Ctrl-C) and must exit."""

    async def run() -> str:
        proc = await trio.lowlevel.open_process(command, stdin=-1, stdout=-1, env=ENV)
        buf: list[bytes] = []
        try:
            await read_until(proc, buf, needle, timeout)
            end = b"".join(buf).index(needle) + len(needle)
            assert proc.stdout is not None
            with trio.fail_after(10):
                while b"\n" not in b"".join(buf)[end:]:
                    buf.append(await proc.stdout.receive_some(65536))
            proc.send_signal(signal.SIGTERM)
            with trio.fail_after(30):
                await proc.wait()
        finally:
            await kill_leftovers([proc])
        return b"".join(buf).decode()

    return trio.run(run)


def _refusing_responder(home: Home, stop: threading.Event, result: int) -> InNamespace:
    """A router whose PCP server refuses every MAP request with `result`."""

    def answer(data: bytes) -> bytes | None:
        if data[:1] == b"\x02" and len(data) >= 60:
            return struct.pack(">BBBBII", 2, 0x81, 0, result, 0, 1) + bytes(12) + data[24:60]
        return None

    return router_responder(home, stop, answer, "the PCP responder")


def test_a_pcp_refusal_is_named_in_words(lab: Lab, tmp_path: Path) -> None:
    home = lab.add_home()
    stop = threading.Event()
    responder = _refusing_responder(home, stop, 8)
    try:
        out = _output_until(_host(home, tmp_path, "--internet", "--port", "4500"), b"\nBRC-")
    finally:
        stop.set()
        responder.join(10)
    line = next(x for x in out.splitlines() if "no PCP/NAT-PMP mapping" in x)
    assert "NO_RESOURCES (8)" in line and "carrier-grade NAT" in line, line


@pytest.mark.skipif(
    importlib.util.find_spec("miniupnpc") is None,
    reason="UPnP needs the miniupnpc package (pip install 'buraco-p2p[upnp]')",
)
def test_no_upnp_device_is_said_so_and_does_not_hold_the_invite_back(
    lab: Lab, tmp_path: Path
) -> None:
    """No PCP, no NAT-PMP, no UPnP device in the home: the invite comes first, then the
    word that nothing answered."""
    home = lab.add_home()
    out = _output_until(_host(home, tmp_path, "--internet", "--port", "4501"),
                        b"no UPnP port mapping")  # fmt: skip
    assert "Success" not in out, out
    assert "no UPnP device answered on the local network" in out, out
    assert out.index("\nBRC-") < out.index("no UPnP port mapping"), out


def test_host_with_bots_honours_internet_and_stun(lab: Lab, tmp_path: Path) -> None:
    home = lab.add_home()
    stop = threading.Event()
    responder = portmap_responder(home, stop)
    stun = [arg for ep in lab.stun_servers() for arg in ("--stun", f"{ep.host}:{ep.port}")]
    try:
        out = _output_until(
            _host(home, tmp_path, "--bots", "1", "--players", "2", "--internet",
                  "--port", "4502", *stun),
            b"\nBRC-",
        )  # fmt: skip
    finally:
        stop.set()
        responder.join(10)
    assert "will contact your router" in out and "the STUN servers" in out, out
    assert "port mapped by PCP" in out, out
    assert "(from STUN)" in out, out
    code = next(x for x in out.splitlines() if x.startswith("BRC-"))
    invite = Invite.from_text(code)
    kinds = dict(zip(invite.addresses, invite.kinds, strict=True))
    assert kinds.get(Endpoint.parse(home.public_ip, 4502)) == CandidateKind.MAPPED, invite
