"""A host's port mapping ends with its table, on a real router: miniupnpd on the router of a
home in the namespace lab (natlab.py), the real `buraco-p2p host --internet` behind it.

- After a match that ends normally, the router holds no mapping of the host, although the
  host asked its router again mid-match (a bot's link dropped: the host checks whether its
  public address moved). It asks with the nonce of its first request, from the same socket:
  RFC 6887 section 11.1 makes the nonce the mapping's owner, and miniupnpd refuses a deletion
  from any other ("Unauthorized to remove PCP mapping"), which left the port open for 7,200 s.
- A host started with SIGINT ignored (`buraco-p2p host ... &` in a shell script) and then
  sent SIGTERM or SIGHUP ends as Ctrl-C would end it, deleting its mapping.

Skipped with the reason where namespaces, nftables or miniupnpd are unavailable.
"""

from __future__ import annotations

import os
import signal
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import trio
from cli_helpers import ENV, kill_leftovers, read_until
from natlab import Lab, Miniupnpd, buraco_command, miniupnpd, miniupnpd_unavailable, unavailable

REASON = unavailable() or miniupnpd_unavailable()
pytestmark = [pytest.mark.netns, pytest.mark.skipif(REASON is not None, reason=REASON or "")]
PORT = 4470


@pytest.fixture
def router(tmp_path: Path) -> Iterator[Miniupnpd]:
    with Lab() as lab:
        home = lab.add_home()
        with miniupnpd(lab, home, tmp_path / "miniupnpd") as running:
            yield running


def _ignoring_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


async def _lines(proc: trio.Process, seen: list[str]) -> AsyncIterator[str]:
    """Each line `proc` prints (kept in `seen` too), until its output ends."""
    assert proc.stdout is not None
    pending = b""
    while True:
        data = await proc.stdout.receive_some(65536)
        if not data:
            return
        pending += data
        while b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            seen.append(line.decode(errors="replace"))
            yield seen[-1]


def _children(pid: int) -> list[int]:
    """The processes `pid` started (its bot peers)."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(c) for c in (task / "children").read_text().split()]
    return found


# A whole match of about 20 s: among the slow tests; the signal cases below, seconds each, are in
# the default run.
@pytest.mark.slow
async def test_the_mapping_is_deleted_after_a_match_that_ends(
    router: Miniupnpd, tmp_path: Path
) -> None:
    command = buraco_command(
        router.home.namespace, tmp_path, "host", "--internet", "--port", str(PORT), "--nick",
        "ana", "--bots", "1", "--players", "2", "--rule", "hands=1", "--auto-approve",
    )  # fmt: skip
    proc = await trio.lowlevel.open_process(command, stdin=-1, stdout=-1, env=ENV)
    seen: list[str] = []
    try:
        assert proc.stdin is not None
        phase, hiccup = "", False
        with trio.fail_after(300):
            async for line in _lines(proc, seen):
                if "every seat is taken" in line:
                    assert router.mappings(), router.log()  # mapped while the table runs
                    await proc.stdin.send_all(b"/ready\n")
                elif line.startswith("hand 1 dealt") and not hiccup:
                    # The bot's link drops (it answers nothing for longer than a heartbeat
                    # timeout): the host asks its router whether its address moved.
                    hiccup = True
                    bots = _children(proc.pid)
                    for pid in bots:
                        os.kill(pid, signal.SIGSTOP)
                    await trio.sleep(8)
                    for pid in bots:
                        os.kill(pid, signal.SIGCONT)
                elif line.startswith("turn: ana (you), "):
                    phase = line.split(", ", 1)[1]
                elif line.startswith("your move"):
                    await proc.stdin.send_all(b"draw\n" if phase == "draw" else b"discard 1\n")
            assert await proc.wait() == 0, "\n".join(seen[-20:])
    finally:
        await kill_leftovers([proc])
    assert "the match is over" in seen, seen[-10:]
    log = router.log()
    # It asked the router three times at least: the mapping, again mid-match, the deletion.
    assert log.count("PCP request received") >= 3, log
    assert "Unauthorized" not in log, log
    assert router.mappings() == [], log


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
async def test_a_signal_ends_a_host_started_with_sigint_ignored_and_its_mapping(
    router: Miniupnpd, tmp_path: Path, sig: int
) -> None:
    command = buraco_command(router.home.namespace, tmp_path, "host", "--internet",
                             "--port", str(PORT), "--nick", "ana")  # fmt: skip
    proc = await trio.lowlevel.open_process(
        command, stdin=-1, stdout=-1, env=ENV, preexec_fn=_ignoring_sigint
    )
    out: list[bytes] = []
    try:
        await read_until(proc, out, b"\nBRC-", 60)
        assert b"port mapped by PCP" in b"".join(out), b"".join(out).decode()
        assert router.mappings(), router.log()
        proc.send_signal(sig)
        with trio.fail_after(30):
            code = await proc.wait()
    finally:
        await kill_leftovers([proc])
    # It ended as Ctrl-C ends it (not killed by the signal), and its mapping went with it.
    assert (code, router.mappings()) == (128 + sig, []), router.log()
