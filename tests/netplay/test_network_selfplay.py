"""Bot peers in separate processes over loopback: identical logs the audit accepts, and a
peer killed with SIGKILL comes back from its data directory and catches up."""

from __future__ import annotations

import os
import random
import stat
import time
from pathlib import Path

import pytest

from buraco_p2p.audit import verify_path
from buraco_p2p.cli import main
from buraco_p2p.play.cluster import Cluster


def test_selfplay_network_one_hand(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["selfplay", "--network", "--hands", "1", "--seed", "5",
                 "--log-dir", str(tmp_path)])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0, out
    assert "byte-identical" in out and "fair" in out
    logs = sorted(tmp_path.glob("*.log"))
    assert len(logs) == 4
    data = {p.read_bytes() for p in logs}
    assert len(data) == 1
    assert verify_path(str(logs[0]), partial=True).code == 0
    # the table directories: private files, the log there starts like the match log
    tables = list(tmp_path.glob("peers-*/peer-0/tables/*"))
    assert len(tables) == 1
    for f in tables[0].iterdir():
        assert stat.S_IMODE(f.stat().st_mode) == 0o600, f
    assert stat.S_IMODE(tables[0].stat().st_mode) == 0o700
    assert (tables[0] / "log").read_bytes().startswith(data.pop()[:200])


@pytest.mark.parametrize("players", [2, 3, 6])
def test_other_seat_counts_over_the_network(tmp_path: Path, players: int) -> None:
    """Nothing assumes four seats: a table of two, three or six peer processes."""
    with Cluster(players, tmp_path / "d", tmp_path, seed=2, hands=1,
                 host_args=["--rules", "classic", "--players", str(players)]) as c:  # fmt: skip
        c.start()
        c.wait_done(240)
    logs = {c.log_path(i).read_bytes() for i in range(players)}
    assert len(logs) == 1
    assert verify_path(str(c.log_path(0)), partial=True).code == 0


def _kill_and_resume(tmp_path: Path, rnd: random.Random, kills: int) -> None:
    with Cluster(4, tmp_path / "d", tmp_path, seed=rnd.randrange(1000), hands=1) as c:
        c.start()
        for _ in range(kills):
            c.poll(rnd.uniform(0.2, 3.0))
            victim = rnd.randrange(4)
            c.kill(victim)
            c.resume(victim)
            c.wait_line(victim, "table", 60)
        c.wait_done(300)
    logs = {c.log_path(i).read_bytes() for i in range(4)}
    assert len(logs) == 1
    assert verify_path(str(c.log_path(0)), partial=True).code == 0


def test_sigkill_and_resume(tmp_path: Path) -> None:
    """Two random kills (the host included when drawn) during one hand; same logs after:
    a peer killed before it joined, or whose host is down too, joins again once the host
    is back, and a host killed before the genesis keeps its seated peers in their seats."""
    _kill_and_resume(tmp_path, random.Random(int.from_bytes(os.urandom(4), "big")), 2)


@pytest.mark.slow
def test_sigkill_soak(tmp_path: Path) -> None:
    for k in range(3):
        _kill_and_resume(tmp_path / str(k), random.Random(k), 6)


@pytest.mark.slow  # the simulator drops and delays messages in every default run
def test_dropped_and_delayed_messages_still_end_in_identical_logs(tmp_path: Path) -> None:
    """Every peer loses a tenth of what it sends and delays the rest by up to 50 ms (so
    messages overtake each other); the catch-up by `sync` still brings every log to the end."""
    c = Cluster(4, tmp_path / "d", tmp_path, seed=21, hands=1)
    for i in range(4):
        c.env[i] = {"BURACO_P2P_NETFAULTS": f"0.1,0.05,{i}"}
    with c:
        c.start()
        c.wait_done(300)
    logs = {c.log_path(i).read_bytes() for i in range(4)}
    assert len(logs) == 1
    assert verify_path(str(c.log_path(0)), partial=True).code == 0


def test_first_join_waits_for_a_restarting_host(tmp_path: Path) -> None:
    """Bot peers whose first join finds the host down (killed after it announced the table)
    keep trying until the host is back from its directory; the match then runs as usual."""
    with Cluster(4, tmp_path / "d", tmp_path, seed=8, hands=1) as c:
        c.start_host()
        c.kill(0)
        for i in range(1, 4):
            c.join(i)
        errs = [c.root / f"peer-{i}.stderr" for i in range(1, 4)]
        deadline = time.monotonic() + 60
        while not all(p.exists() and b"trying again" in p.read_bytes() for p in errs):
            assert time.monotonic() < deadline, "the joiners never met the host down"
            c.poll(0.1)  # a joiner that gives up instead exits, and the cluster raises
        c.resume(0)
        c.wait_done(300)
    logs = {c.log_path(i).read_bytes() for i in range(4)}
    assert len(logs) == 1
    assert verify_path(str(c.log_path(0)), partial=True).code == 0


def test_host_killed_before_the_genesis_keeps_its_seated_peers(tmp_path: Path) -> None:
    """Two joiners seated, then the host is killed before the table is full: restarted
    from its directory it seats them where they were (a joiner ignores a roster older than
    the one it holds, so a host that forgot its seating would leave them waiting)."""
    with Cluster(4, tmp_path / "d", tmp_path, seed=9, hands=1) as c:
        c.start_host()
        for i in (1, 2):
            c.join(i)
            c.wait_line(i, "table", 60)
        c.kill(0)
        c.resume(0)
        c.wait_line(0, "table", 60)
        c.join(3)
        c.wait_done(300)
    logs = {c.log_path(i).read_bytes() for i in range(4)}
    assert len(logs) == 1
    assert verify_path(str(c.log_path(0)), partial=True).code == 0
