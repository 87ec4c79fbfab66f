"""`verify` run beside a replay: how far the log is found good, then the verdict.

The audit is `buraco-p2p verify`'s own (`audit.verify_bytes`, its proofs checked on `jobs`
processes as `verify --jobs` does), run in a child process so that the screen stays quick while
it works. The child tells, over a pipe, each time more of the log is settled good
(`("good", n)`: the first n entries passed every check, `verify_jobs.replay_log`'s progress),
and at the end `("verdict", code, document)`: the exit code and the `--json` document `verify`
prints. The replay shows a hand only once the log is settled good past it, so it never shows
anything `verify` has not checked, and a log `verify` refuses stops where `verify` says.

The child is forked while this process has no other thread (it then starts at once, with
everything imported, and forks its own workers), else started afresh.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import signal
import sys
import threading
import time
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Any, Final

from buraco_p2p.audit import verify_bytes

__all__ = ["Checker"]

TELL_EVERY_S: Final = 0.02  # progress at most this often (and always the last count)


def _check(data: bytes, name: str, jobs: int, out: Connection) -> None:
    """The child: the audit, its progress and its verdict sent to the parent."""
    # Stopped by the parent: leave through the audit's own clean-up (its workers stopped).
    # Ctrl-C in the terminal is the parent's to answer (its workers inherit the same).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    last = [0.0]
    pending = [0]

    def progress(n: int) -> None:
        now = time.monotonic()
        pending[0] = n
        if now - last[0] >= TELL_EVERY_S:
            last[0] = now
            out.send(("good", n))

    try:
        verdict = verify_bytes(data, name=name, jobs=jobs, progress=progress)
        out.send(("good", pending[0]))
        out.send(("verdict", verdict.code, verdict.doc))
    except (BrokenPipeError, EOFError, OSError):
        pass  # the replay was closed: nobody to tell
    finally:
        out.close()


class Checker:
    """The audit of one log in a child process; `poll()` takes what it has told since."""

    def __init__(self, data: bytes, name: str, jobs: int) -> None:
        single = threading.active_count() == 1
        method = "fork" if single and "fork" in multiprocessing.get_all_start_methods() else (
            "spawn"
        )  # fmt: skip
        ctx: Any = multiprocessing.get_context(method)
        self._conn, child = ctx.Pipe(duplex=False)
        # Not a daemon: the audit starts worker processes of its own.
        self.process: BaseProcess = ctx.Process(
            target=_check, args=(data, name, jobs, child), name="buraco-p2p verify"
        )
        self.process.start()
        child.close()
        self.good = 0
        self.verdict: tuple[int, dict[str, Any]] | None = None
        self.failed = ""  # the child ended without a verdict: why, in words

    def fileno(self) -> int:
        """The pipe to watch for news (an event loop's reader)."""
        fd: int = self._conn.fileno()
        return fd

    def poll(self) -> bool:
        """Take every message waiting; whether anything changed."""
        changed = False
        while self.verdict is None and not self.failed:
            try:
                if not self._conn.poll():
                    break
                msg = self._conn.recv()
            except (EOFError, OSError):
                self.failed = f"the verifier stopped (exit code {self.process.exitcode})"
                changed = True
                break
            if msg[0] == "good":
                self.good = max(self.good, int(msg[1]))
            else:
                self.verdict = (int(msg[1]), dict(msg[2]))
            changed = True
        return changed

    def wait(self, timeout: float) -> bool:
        """Wait up to `timeout` seconds for news; whether any came."""
        with contextlib.suppress(OSError):
            if self.verdict is None and not self.failed and self._conn.poll(timeout):
                return self.poll()
        return False

    def stop(self) -> None:
        """Stop the audit (its workers with it) and wait for the child to go."""
        if self.process.is_alive():
            self.process.terminate()
        self.process.join(5)
        if self.process.is_alive():  # pragma: no cover - a child that ignores SIGTERM
            self.process.kill()
            self.process.join(5)
        with contextlib.suppress(OSError):
            self._conn.close()
