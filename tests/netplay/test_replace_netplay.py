"""A person who does not come back is replaced by a bot over the network: after the table's
timeout the host proposes "replace" with a new identity, the present parties sign it, the
host frees the seat and starts a bot peer that fetches the log, follows it as an heir and
plays the seat from the hand dealt again; the match ends with identical logs everywhere.

The heir is a peer like any other: killed mid-hand and resumed from its data directory it
takes its seat again; and a host killed after seating it restarts it and readmits it."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest

from buraco_p2p.audit import verify_path
from buraco_p2p.net.channel.identity import Identity
from buraco_p2p.net.table.table import Roster
from buraco_p2p.play.cluster import Cluster
from buraco_p2p.play.heir import resume_argv
from buraco_p2p.play.store import TableStore

from .lost import (
    HeirProcess,
    check_succession,
    hand_under_way,
    heir_logs,
    heir_playing,
    heir_started,
    kill_pid,
    lose,
    one_log,
    voids,
)

GONE = 3


def replacing(tmp_path: Path, timeout_ms: int = 5000) -> contextlib.AbstractContextManager[Cluster]:
    """Bots that replace a party silent for `timeout_ms`, a short match, the first hand under
    way. A peer killed and resumed must be back and caught up within that timeout, or it is
    replaced in turn: `RESTART` leaves room for a restart on a loaded 2-core machine."""
    return hand_under_way(tmp_path, seed=21, void="replace", timeout_ms=timeout_ms,
                          host_args=["--rule", "target_score=300"])  # fmt: skip


RESTART = 12_000


def kill_and_resume(c: Cluster, heir: HeirProcess) -> None:
    """SIGKILL the host's heir bot and start it again as its user would (`bot-peer --resume`
    from its data directory); the cluster runs it as seat `GONE` from now on."""
    kill_pid(heir.pid)
    assert c.table is not None
    c.skip.discard(GONE)
    c.adopt(GONE, resume_argv(heir.argv, c.table))


def finished(c: Cluster) -> list[Path]:
    """The logs of a match that ended with one heir: the present peers' and the heir's."""
    c.wait_done(240)
    heirs = heir_logs(c)
    assert len(heirs) == 1
    return [c.log_path(i) for i in range(4) if i != GONE] + heirs


def test_a_peer_gone_for_good_is_replaced_by_a_bot_and_the_match_ends(tmp_path: Path) -> None:
    with replacing(tmp_path) as c:
        lose(c, GONE)
        logs = finished(c)
    check_succession(logs)


def test_the_heir_killed_mid_hand_resumes_and_the_match_ends(tmp_path: Path) -> None:
    with replacing(tmp_path, RESTART) as c:
        lose(c, GONE)
        heir = heir_playing(c, moves=3)
        kill_and_resume(c, heir)
        logs = finished(c)
    check_succession(logs)


@pytest.mark.slow  # crashes and restarts of heirs: in the simulator's default run too
def test_the_heir_killed_before_it_saved_the_genesis_resumes_as_an_heir(tmp_path: Path) -> None:
    """Killed as soon as it kept its secret (most runs: before the genesis reached it), the
    heir resumes and takes the genesis from the peers again, not from a lobby."""
    with replacing(tmp_path, RESTART) as c:
        lose(c, GONE)
        heir = heir_started(c)
        kill_and_resume(c, heir)
        logs = finished(c)
    check_succession(logs)


def test_without_the_host_nobody_seats_a_bot_and_the_match_ends(tmp_path: Path) -> None:
    """Only the host can free a seat and let a new key in: with the host gone, the bots
    that would replace propose to end the match instead."""
    with hand_under_way(tmp_path, seed=23, void="replace", timeout_ms=3000, watch=1) as c:
        lose(c, 0)
        c.wait_done(240)
    entries = one_log([c.log_path(i) for i in range(1, 4)])
    rounds = voids(entries)
    assert rounds and {e.body["action"] for e in rounds} == {"end"}
    assert {tuple(e.body["silent"]) for e in rounds} == {(0,)}
    assert not list(tmp_path.glob("*heir*"))
    assert verify_path(str(c.log_path(1))).code == 0


@pytest.mark.slow  # crashes and restarts of heirs: in the simulator's default run too
def test_the_host_killed_after_seating_an_heir_restarts_and_readmits_it(tmp_path: Path) -> None:
    """The heir is in the host's saved roster: a host killed while the heir plays comes back
    on its port, starts its heir again from the heir's data directory, and the heir (whose
    link to the host was cut, and whose parent went away) plays its seat to the end."""
    with replacing(tmp_path, RESTART) as c:
        lose(c, GONE)
        heir = heir_playing(c, moves=3)
        c.kill(0)
        assert c.table is not None
        host = TableStore.for_table(bytes.fromhex(c.table), c.root / "peer-0")
        _, seed = TableStore.for_table(bytes.fromhex(c.table), heir.data_dir).load_secret()
        assert seed is not None
        key = Identity.from_seed(seed, "heir").public
        assert Roster.from_wire(host.load_roster(), "saved roster").member(key) is not None
        c.resume(0)
        logs = finished(c)
    check_succession(logs)


def test_an_heirs_command_line_resumes_its_table_from_its_own_directory() -> None:
    started = ["py", "-m", "buraco_p2p", "bot-peer", "--join", "CODE", "--heir",
               "--data-dir", "/d/heir-1-ab", "--name", "bot-ab", "--log-out", "x.log"]  # fmt: skip
    assert resume_argv(started, "00ff") == [
        "py", "-m", "buraco_p2p", "bot-peer", "--resume", "00ff", "--heir",
        "--data-dir", "/d/heir-1-ab", "--name", "bot-ab", "--log-out", "x.log",
    ]  # fmt: skip
    with pytest.raises(ValueError, match="heir"):
        resume_argv(["bot-peer", "--join", "CODE", "--data-dir", "/d"], "00ff")
