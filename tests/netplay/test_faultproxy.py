"""Four bot peer processes whose every link runs through a fault-injecting TCP forwarder on
loopback (faultproxy.py): delayed, stalled like a partition, cut in the middle of a message.
No root needed: this is the variant of the namespace tests that runs everywhere."""

from __future__ import annotations

import random
import secrets
import time
from pathlib import Path

import pytest
import trio

from buraco_p2p.audit import verify_path
from buraco_p2p.cli import main
from buraco_p2p.net.reach.invite import Invite
from buraco_p2p.play.cluster import Cluster

from .faultproxy import FaultProxy


def _proxied(c: Cluster, rnd: random.Random) -> list[FaultProxy]:
    """Peer i listens on a loopback address of its own and is known by its forwarder's."""
    base = f"127.{2 + secrets.randbelow(250)}.{secrets.randbelow(256)}"
    port = 20000 + secrets.randbelow(10000)
    proxies = []
    for i in range(c.players):
        real, shown = f"{base}.{i + 1}", f"{base}.{i + 101}"
        c.extra[i] = ["--listen", real, "--port", str(port), "--advertise", shown]
        proxies.append(FaultProxy((shown, port), (real, port), rnd))
    return proxies


async def _cut_one(proxies: list[FaultProxy], rnd: random.Random) -> None:
    """Cut a random open connection mid-chunk and wait until it is cut (a connection that
    closes on its own first does not count)."""
    before = sum(p.cuts for p in proxies)
    while sum(p.cuts for p in proxies) == before:
        done = rnd.choice(proxies).cut()
        if done is None:
            await trio.sleep(0.05)
        else:
            await done.wait()


async def test_links_delayed_stalled_and_cut_mid_stream_still_end_in_identical_logs(
    tmp_path: Path,
) -> None:
    """Mid-match, ten links are cut with half a chunk forwarded; then every link of the host
    (each dialled to it, so through its forwarder) stalls for longer than a link's heartbeat
    timeout, a partition of the host from the table. Every chunk is late by up to 20 ms."""
    rnd = random.Random(36)
    c = Cluster(4, tmp_path / "d", tmp_path, seed=36, hands=2)
    proxies = _proxied(c, rnd)
    c.extra[0] += ["--report-at", "40"]
    async with trio.open_nursery() as nursery:
        for p in proxies:
            await nursery.start(p.serve)
        try:
            await trio.to_thread.run_sync(c.start)
            invite = Invite.from_text(c.invite or "")
            assert [(str(a.ip), a.port) for a in invite.addresses] == [proxies[0].listen]
            await trio.to_thread.run_sync(c.wait_line, 0, "reached", 60)
            for _ in range(10):
                await trio.sleep(rnd.uniform(0.1, 0.6))
                with trio.fail_after(20):
                    await _cut_one(proxies, rnd)
            proxies[0].stall()
            await trio.sleep(7)
            proxies[0].resume()
            await trio.to_thread.run_sync(c.wait_done, 180)
        finally:
            await trio.to_thread.run_sync(c.close)
            nursery.cancel_scope.cancel()
    # every link went through a forwarder: a peer dials the lower seats, so only the last
    # seated peer's forwarder is never dialled; every cut link was dialled again
    stats = [(p.accepted, p.forwarded, p.cuts) for p in proxies]
    assert sum(p.accepted > 0 and p.forwarded > 0 for p in proxies) >= 3, stats
    assert sum(p.cuts for p in proxies) == 10, stats
    assert sum(p.accepted for p in proxies) >= 6 + 10, stats
    assert proxies[0].held > 0  # the stall held data back
    logs = [c.log_path(i).read_bytes() for i in range(4)]
    assert all(log == logs[0] for log in logs), [len(log) for log in logs]
    for i in range(4):
        assert verify_path(str(c.log_path(i)), partial=True).code == 0


def _drain(c: Cluster, seconds: float) -> None:
    """Take in the peers' lines for `seconds` (a peer that exits with an error raises)."""
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        c.poll(left)


async def test_joiners_that_cannot_reach_the_host_keep_trying(tmp_path: Path) -> None:
    """The host's forwarder holds every connection while three bot peers try to join, for
    longer than a dial's timeout: they try again, with a growing pause, and are seated once
    it lets them through, as `join` does."""
    c = Cluster(4, tmp_path / "d", tmp_path, seed=37, hands=1)
    proxies = _proxied(c, random.Random(37))
    async with trio.open_nursery() as nursery:
        for p in proxies:
            await nursery.start(p.serve)
        try:
            await trio.to_thread.run_sync(c.start_host)
            proxies[0].stall()
            for i in (1, 2, 3):
                c.join(i)
            await trio.to_thread.run_sync(_drain, c, 8)
            assert proxies[0].held >= 3 and not c.done
            proxies[0].resume()
            await trio.to_thread.run_sync(c.wait_done, 120)
        finally:
            await trio.to_thread.run_sync(c.close)
            nursery.cancel_scope.cancel()
    logs = [c.log_path(i).read_bytes() for i in range(4)]
    assert all(log == logs[0] for log in logs)


def test_a_bot_peer_advertising_a_forwarder_needs_its_port(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The forwarder listens on the advertised address at the peer's own port, so that
    port has to be fixed in advance."""
    code = main(["bot-peer", "--host", "--data-dir", str(tmp_path), "--advertise", "127.0.0.2"])
    assert code == 2
    assert "--advertise needs --port" in capsys.readouterr().err
