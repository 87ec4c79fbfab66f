"""The cluster of the lost-peer tests: four bot peers on loopback, a hand under way, one peer
killed for good, and what the tests then read: saved logs, the host's heir bots, the verdict.

A host's heir bot is the host's child process, not the cluster's: it is found by its command
line (`/proc`, Linux) under the cluster's data directory."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import trio

from buraco_p2p.audit import render_text, verify_path
from buraco_p2p.logfile import LogFileError, decode_log
from buraco_p2p.net.channel.identity import Identity
from buraco_p2p.net.mesh.mesh import Mesh
from buraco_p2p.play.cluster import Cluster, ClusterError
from buraco_p2p.play.driver import Driver
from buraco_p2p.play.genesis import check_terms, sign_terms
from buraco_p2p.session import Entry, decode_entry, parse_genesis

DEALT = 60  # entries in a log once the first hand is under way (past the deal)


def saved_entries(path: Path) -> list[Entry]:
    """The entries of a log file another process is writing (none while it is mid-record)."""
    try:
        return [decode_entry(w) for w in decode_log(path.read_bytes())]
    except (OSError, LogFileError):
        return []


def table_log(data_dir: Path) -> Path | None:
    """The log file of the one table in a peer's data directory, once it has one."""
    logs = sorted(data_dir.glob("tables/*/log"))
    return logs[0] if logs else None


def wait_for(c: Cluster, what: str, ready: Callable[[], bool], timeout: float = 120.0) -> None:
    """Poll the cluster's lines until `ready()` holds; `ClusterError` naming `what` if not."""
    deadline = time.monotonic() + timeout
    while not ready():
        if time.monotonic() > deadline:
            raise ClusterError(f"{what}: not within {timeout:.0f} s")
        c.poll(0.2)


def wait_for_entries(c: Cluster, watch: int, entries: int = DEALT) -> None:
    """Until peer `watch` has saved more than `entries` entries."""

    def ready() -> bool:
        path = table_log(c.root / f"peer-{watch}")
        return path is not None and len(saved_entries(path)) > entries

    wait_for(c, f"peer {watch} past {entries} entries", ready)


@contextlib.contextmanager
def hand_under_way(
    tmp_path: Path, *, seed: int, void: str, timeout_ms: int, watch: int = 0,
    host_args: Sequence[str] = (),
) -> Iterator[Cluster]:  # fmt: skip
    """Four bot peers (logs into `tmp_path`) that propose `void` after `timeout_ms` of
    silence, once peer `watch` has the first hand under way."""
    peer_args = ["--timeout-ms", str(timeout_ms), "--void", void]
    with Cluster(4, tmp_path / "d", tmp_path, seed=seed, host_args=host_args,
                 peer_args=peer_args) as c:  # fmt: skip
        c.start()
        wait_for_entries(c, watch)
        yield c


def lose(c: Cluster, i: int) -> None:
    """Kill peer `i` for good: the cluster no longer waits for it."""
    c.kill(i)
    c.skip.add(i)


def one_log(paths: Sequence[Path]) -> list[Entry]:
    """The entries of logs that must be byte-identical."""
    datas = {p.read_bytes() for p in paths}
    assert len(datas) == 1, [p.name for p in paths]
    return [decode_entry(w) for w in decode_log(datas.pop())]


def voids(entries: Sequence[Entry]) -> list[Entry]:
    return [e for e in entries if e.kind == "void"]


async def seated(who: Identity, mesh: Mesh, drivers: list[Driver], timeout: float = 30) -> Any:
    """Sign the host's terms as `who` over `mesh` (a joiner's, in process); returns the host's
    key once the log of the host's driver (`drivers[0]`, when it is up) holds the seats."""
    with trio.fail_after(timeout):
        peer, terms = await mesh.receive()
        while terms[0] != "terms":
            peer, terms = await mesh.receive()
        assert mesh.roster is not None
        check_terms(terms[1], mesh.roster.members, who.public)
        await mesh.send(peer, ["gsig", sign_terms(who, mesh.table_id, terms[1])])
        while not drivers or len(drivers[0].peer.log) < 2:
            await trio.sleep(0.01)
    return peer


# -- the host's heir bots ---------------------------------------------------------------------


@dataclass(frozen=True)
class HeirProcess:
    pid: int
    argv: list[str]
    data_dir: Path


def processes_with(word: str, under: Path) -> list[tuple[int, list[str], Path]]:
    """The running processes (not zombies) with `word` in their command line and a
    `--data-dir` under `under`: pid, argv and that data directory, read from `/proc`."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            argv = [a.decode() for a in (proc / "cmdline").read_bytes().split(b"\0")[:-1]]
            state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if word not in argv or "--data-dir" not in argv or state == "Z":
            continue
        data = Path(argv[argv.index("--data-dir") + 1])
        if data.is_relative_to(under):
            found.append((int(proc.name), argv, data))
    return found


def heir_processes(c: Cluster) -> list[HeirProcess]:
    """The running heir bots whose data directory is under the cluster's."""
    return [HeirProcess(pid, argv, data) for pid, argv, data in processes_with("--heir", c.root)]


def heir_moves(data_dir: Path) -> int:
    """How many entries the heir in `data_dir` has saved that the seat it took signed after
    the last void (the seat played by the heir)."""
    path = table_log(data_dir)
    entries = saved_entries(path) if path is not None else []
    rounds = voids(entries)
    if not rounds:
        return 0
    (party,) = rounds[-1].body["silent"]
    return sum(1 for e in entries[rounds[-1].index + 1 :] if e.author == party)


def heir_playing(c: Cluster, moves: int) -> HeirProcess:
    """The one heir, once it has signed `moves` entries of its own after the replace."""
    heirs: list[HeirProcess] = []

    def ready() -> bool:
        heirs[:] = heir_processes(c)
        return len(heirs) == 1 and heir_moves(heirs[0].data_dir) >= moves

    wait_for(c, f"an heir playing {moves} moves", ready)
    return heirs[0]


def heir_started(c: Cluster, timeout: float = 120.0) -> HeirProcess:
    """The one heir, as soon as it has kept its secret (its table directory exists): looked
    at often, to find it before the genesis reaches it."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        heirs = heir_processes(c)
        if len(heirs) == 1 and list(heirs[0].data_dir.glob("tables/*/secret")):
            return heirs[0]
        time.sleep(0.002)
    raise ClusterError(f"no heir started within {timeout:.0f} s")


def kill_pid(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


def heir_logs(c: Cluster, count: int = 1, timeout: float = 60.0) -> list[Path]:
    """The logs the host's heir bots wrote next to the host's (once `count` are there)."""
    log_dir = c.log_dir
    assert log_dir is not None
    found: list[Path] = []

    def ready() -> bool:
        found[:] = sorted(log_dir.glob("peer-0-heir-*.log"))
        return len(found) >= count

    wait_for(c, f"{count} heir logs", ready, timeout)
    return found


def check_succession(paths: Sequence[Path]) -> list[Entry]:
    """Byte-identical logs in which one "replace" round passes one party's seat to a new key
    that plays on to the final entry, and the audit accepts each and names the succession."""
    entries = one_log(paths)
    rounds = voids(entries)
    assert rounds and {e.body["action"] for e in rounds} == {"replace"}
    (silent,) = {tuple(e.body["silent"]) for e in rounds}
    (keys,) = {tuple(e.body["keys"]) for e in rounds}
    assert len(silent) == 1 and len(keys) == 1
    (gone,) = silent
    old = parse_genesis(entries[0]).keys[gone]
    assert old.raw != keys[0]
    last_void = max(e.index for e in rounds)
    later = [e for e in entries[last_void + 1 :] if e.author == gone]
    assert later and entries[-1].kind == "final"
    for p in paths:
        verdict = verify_path(str(p))
        assert verdict.code == 0, render_text(verdict.doc)
        (s,) = verdict.doc["successions"]
        assert s["party"] == gone and s["from_index"] == last_void + 1
        assert s["old_fingerprint"] == old.fingerprint()
        assert s["new_fingerprint"] != old.fingerprint()
        assert "succession: party" in render_text(verdict.doc)
    return entries
