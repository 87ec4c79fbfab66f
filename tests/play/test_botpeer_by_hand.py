"""`buraco-p2p bot-peer --void ...` started by a person: in a terminal it says what it will do
(its seat, what it proposes when a party keeps the table waiting, how it stops) before its
invite; with its input closed from the start it says why it stops at once, and exits 1."""

from __future__ import annotations

import os
import pty
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

WAIT = 120.0  # a real process importing everything, on a shared machine


def test_an_input_closed_from_the_start_is_explained(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "buraco_p2p", "bot-peer", "--host", "--void", "void",
         "--data-dir", str(tmp_path)],
        stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=WAIT,
    )  # fmt: skip
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr.count("\n") == 1
    assert "standard input ended before the table was under way" in done.stderr
    assert "sleep infinity | buraco-p2p bot-peer" in done.stderr


def _read_until(fd: int, text: bytes, deadline: float) -> bytes:
    out = b""
    while text not in out:
        left = deadline - time.monotonic()
        assert left > 0, out.decode(errors="replace")
        ready, _, _ = select.select([fd], [], [], min(left, 1.0))
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:  # the terminal closed: the process is gone
                break
            if not chunk:
                break
            out += chunk
    return out


def test_in_a_terminal_it_says_what_it_will_do_and_ctrl_d_stops_it(tmp_path: Path) -> None:
    argv = [sys.executable, "-m", "buraco_p2p", "bot-peer", "--host", "--players", "2",
            "--void", "end", "--timeout-ms", "5000", "--data-dir", str(tmp_path),
            "--log-out", str(tmp_path / "match.log")]  # fmt: skip
    pid, fd = pty.fork()
    if pid == 0:  # the child: a real terminal on its stdin, stdout and stderr
        os.execv(sys.executable, argv)
    try:
        out = _read_until(fd, b"\ntable ", time.monotonic() + WAIT).decode()
        said = out[: out.index("\ninvite ")]
        assert "hosting a table as 'bot0', its seat played by the normal bot" in said
        assert "keeps the table waiting 5 s (--timeout-ms)" in said
        assert "proposes that the present parties end the match where it stands" in said
        assert f"writes the log to {tmp_path / 'match.log'}" in said
        assert "until its standard input ends (Ctrl-D)" in said
        os.write(fd, b"\x04")  # Ctrl-D at the start of a line: end of input
        deadline = time.monotonic() + WAIT
        while True:
            got, status = os.waitpid(pid, os.WNOHANG)
            if got:
                break
            assert time.monotonic() < deadline
            ready, _, _ = select.select([fd], [], [], 0.2)  # drain what it still says
            if ready:
                try:
                    os.read(fd, 4096)
                except OSError:
                    time.sleep(0.2)
        pid = 0
        assert os.waitstatus_to_exitcode(status) == 0
    finally:
        if pid:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        os.close(fd)
