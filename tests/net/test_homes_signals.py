"""A host stopped by SIGTERM or SIGHUP (its terminal closed) ends the table as Ctrl-C does:
the port mapping it holds on the router is deleted. The real `buraco-p2p host --internet` in
a home of the namespace lab (natlab.py), its router answering PCP with the lab's responder,
which records every request; skipped with the reason where namespaces or nftables are
unavailable."""

from __future__ import annotations

import signal
import struct
import sys
import threading
from pathlib import Path

import pytest
import trio
from cli_helpers import ENV, kill_leftovers, read_until
from natlab import Lab, portmap_responder, unavailable

REASON = unavailable()
pytestmark = pytest.mark.skipif(REASON is not None, reason=REASON or "")


def _lifetimes(requests: list[bytes]) -> list[int]:
    """The lifetime each PCP MAP request asked for (0: a deletion)."""
    return [struct.unpack(">I", r[4:8])[0] for r in requests if r[:2] == b"\x02\x01"]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_a_signal_ends_the_host_and_deletes_its_mapping(tmp_path: Path, sig: int) -> None:
    requests: list[bytes] = []
    with Lab() as lab:
        home = lab.add_home()
        stop = threading.Event()
        responder = portmap_responder(home, stop, log=requests)
        command = [
            "ip", "netns", "exec", home.namespace, sys.executable, "-m", "buraco_p2p", "host",
            "--line", "--internet", "--port", "4470", "--nick", "ana",
            "--config-dir", str(tmp_path / "id"), "--data-dir", str(tmp_path / "data"),
        ]  # fmt: skip

        async def run() -> tuple[int, str]:
            proc = await trio.lowlevel.open_process(command, stdin=-1, stdout=-1, env=ENV)
            buf: list[bytes] = []
            try:
                await read_until(proc, buf, b"\nBRC-", 60)
                assert _lifetimes(requests)[:1] == [7200], requests
                proc.send_signal(sig)
                with trio.fail_after(30):
                    code = await proc.wait()
            finally:
                await kill_leftovers([proc])
            return code, b"".join(buf).decode()

        try:
            code, output = trio.run(run)
        finally:
            stop.set()
            responder.join(10)
    assert "port mapped by PCP" in output, output
    assert code == 128 + sig
    # the last request the router heard deletes the mapping it granted
    assert _lifetimes(requests)[-1] == 0, _lifetimes(requests)
