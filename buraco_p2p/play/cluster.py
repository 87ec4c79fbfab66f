"""Bot peer processes on loopback, started, killed and resumed from the outside.

`Cluster` is what `selfplay --network`, `play`, `host --bots`, the fault tests and the
benchmark use: one `buraco-p2p bot-peer` process per seat (the first hosts), each with its own
data directory, talking the line protocol of `play.botpeer` on stdout.
"""

from __future__ import annotations

import contextlib
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path

__all__ = ["BotProcess", "Cluster", "ClusterError"]


class ClusterError(RuntimeError):
    """A bot peer process that failed, or did not answer in time."""


class BotProcess:
    """One running `bot-peer`; its stdout lines go to the cluster's queue."""

    def __init__(self, index: int, argv: list[str], lines: queue.Queue[tuple[int, str]],
                 stderr_path: Path, env: dict[str, str] | None = None) -> None:  # fmt: skip
        self.index = index
        self.argv = argv
        self._err = open(stderr_path, "ab")  # noqa: SIM115 - closed in close()
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._err,
            start_new_session=True, env={**os.environ, **(env or {})},
        )  # fmt: skip
        self.started = time.monotonic()
        assert self.proc.stdout is not None
        out = self.proc.stdout

        def pump() -> None:
            for raw in out:
                lines.put((index, raw.decode("utf-8", "replace").rstrip("\n")))
            lines.put((index, "exit"))

        threading.Thread(target=pump, daemon=True).start()

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()
        self.close()

    def finish(self, timeout: float) -> int:
        """Close stdin (the peer exits when it is done serving); kill it after `timeout`."""
        if self.proc.stdin is not None:
            with contextlib.suppress(OSError):
                self.proc.stdin.close()
        try:
            code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            code = -9
        self.close()
        return code

    def close(self) -> None:
        with contextlib.suppress(OSError):
            if self.proc.stdin is not None:
                self.proc.stdin.close()
        self._err.close()


class Cluster:
    """`players` bot peers of one table on loopback, data under `root`, logs into `log_dir`."""

    def __init__(
        self,
        players: int,
        root: Path,
        log_dir: Path | None,
        *,
        seed: int | None = None,
        hands: int | None = None,
        host_args: Sequence[str] = (),
        peer_args: Sequence[str] = (),
        humans: Sequence[int] = (),
        stats: bool = False,
    ) -> None:
        self.players = players
        self.root = root
        self.log_dir = log_dir
        self.seed = seed
        self.hands = hands
        self.host_args = list(host_args)
        self.peer_args = list(peer_args)
        self.lines: queue.Queue[tuple[int, str]] = queue.Queue()
        self.procs: dict[int, BotProcess] = {}
        self.invite: str | None = None
        self.table: str | None = None
        self.done: set[int] = set()
        self.skip = set(humans)
        self.stats = stats
        self.extra: dict[int, list[str]] = {}
        self.env: dict[int, dict[str, str]] = {}

    def log_path(self, i: int) -> Path:
        assert self.log_dir is not None
        return self.log_dir / f"peer-{i}.log"

    def _argv(self, i: int, how: list[str]) -> list[str]:
        argv = [sys.executable, "-m", "buraco_p2p", "bot-peer", *how,
                "--data-dir", str(self.root / f"peer-{i}"), "--index", str(i)]  # fmt: skip
        if self.seed is not None:
            argv += ["--seed", str(self.seed)]
        if self.hands is not None:
            argv += ["--hands", str(self.hands)]
        if self.log_dir is not None:
            argv += ["--log-out", str(self.log_path(i))]
        if self.stats:
            argv += ["--stats", str(self.stats_path(i))]
        return argv + self.peer_args + self.extra.pop(i, [])

    def stats_path(self, i: int) -> Path:
        return self.root / f"stats-{i}.json"

    def _spawn(self, i: int, how: list[str]) -> BotProcess:
        self.root.mkdir(parents=True, exist_ok=True)
        p = BotProcess(i, self._argv(i, how), self.lines, self.root / f"peer-{i}.stderr",
                       self.env.get(i))  # fmt: skip
        self.procs[i] = p
        return p

    def adopt(self, i: int, argv: list[str]) -> BotProcess:
        """Run `argv` (a bot peer's whole command line) as seat `i`'s process: one another
        process started (a host's heir bot), started again here."""
        self.done.discard(i)
        p = BotProcess(i, argv, self.lines, self.root / f"peer-{i}.stderr", self.env.get(i))
        self.procs[i] = p
        return p

    def start_host(self, timeout: float = 30.0) -> str:
        self._spawn(0, ["--host", *self.host_args])
        self.wait_line(0, "table", timeout)
        assert self.invite is not None
        return self.invite

    def start(self, timeout: float = 30.0) -> None:
        """The host, then every other seat that is not a person's."""
        if 0 not in self.skip:
            self.start_host(timeout)
        for i in range(1, self.players):
            if i not in self.skip:
                self.join(i)

    def join(self, i: int, invite: str | None = None) -> BotProcess:
        code = invite or self.invite
        assert code is not None
        return self._spawn(i, ["--join", code])

    def kill(self, i: int) -> None:
        self.procs[i].kill()

    def resume(self, i: int) -> BotProcess:
        assert self.table is not None
        self.done.discard(i)
        if not (self.root / f"peer-{i}" / "tables" / self.table / "secret").exists():
            # killed before it had joined: it joins again (with the same identity)
            return self.join(i) if i else self._spawn(0, ["--host", *self.host_args])
        return self._spawn(i, ["--resume", self.table])

    def wait_line(self, i: int, word: str, timeout: float) -> str:
        """Read lines until process `i` says `word`; returns the rest of its line."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise ClusterError(f"peer {i} did not say {word!r} within {timeout:.0f} s")
            try:
                j, line = self.lines.get(timeout=left)
            except queue.Empty:
                continue
            rest = self._note(j, line)
            if j == i and line.split(" ", 1)[0] == word:
                return rest

    def _note(self, j: int, line: str) -> str:
        word, _, rest = line.partition(" ")
        if word == "invite":
            self.invite = rest
        elif word == "table":
            self.table = rest
        elif word == "done":
            self.done.add(j)
        elif word == "exit" and j in self.procs and self.procs[j].proc.poll() not in (None, 0):
            code = self.procs[j].proc.poll()
            if code != -signal.SIGKILL:
                raise ClusterError(f"peer {j} exited with status {code}: see {self.root}")
        return rest

    def poll(self, timeout: float) -> None:
        """Take in stdout lines for up to `timeout` seconds (or until one arrives)."""
        try:
            j, line = self.lines.get(timeout=timeout)
        except queue.Empty:
            return
        self._note(j, line)

    def wait_done(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        want = set(range(self.players)) - self.skip
        while not want <= self.done:
            left = deadline - time.monotonic()
            if left <= 0:
                missing = sorted(want - self.done)
                raise ClusterError(f"peers {missing} not done within {timeout:.0f} s")
            self.poll(min(left, 0.5))

    def close(self, timeout: float = 10.0) -> None:
        for p in self.procs.values():
            if p.proc.poll() is None:
                p.finish(timeout)
            else:
                p.close()

    def __enter__(self) -> Cluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
