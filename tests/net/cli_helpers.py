"""Shared helpers for tests that drive the real `buraco-p2p` command in child processes."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import trio

COMMAND = (sys.executable, "-m", "buraco_p2p")
# Unbuffered, so every line the child prints reaches `read_until` as it is printed.
ENV = {**os.environ, "PYTHONUNBUFFERED": "1"}


async def start(
    args: Sequence[str], config_dir: Path, *, stdin: int = subprocess.PIPE, **options: Any
) -> trio.Process:
    """Start `buraco-p2p args` with its identity in `config_dir` and its output piped."""
    return await trio.lowlevel.open_process(
        [*COMMAND, *args, "--config-dir", str(config_dir)],
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=ENV,
        **options,
    )


async def start_line_joiner(code: str, home: Path, nick: str = "bia") -> trio.Process:
    """`buraco-p2p join code --line` as `nick` on 127.0.0.1, its identity in `home/nick` and
    its tables in `home`, so nothing of the user's is read or written."""
    args = ["join", code, "--line", "--listen", "127.0.0.1", "--nick", nick]
    return await start([*args, "--data-dir", str(home)], home / nick)


def invite_code(buf: Sequence[bytes]) -> str:
    """The invite code (`BRC-...`) a host printed into `buf`."""
    return next(line for line in b"".join(buf).decode().splitlines() if line.startswith("BRC-"))


async def read_until(proc: trio.Process, buf: list[bytes], needle: bytes, timeout: float) -> bytes:
    """Read `proc`'s output into `buf` until `needle` appears; fail with what it did print."""
    assert proc.stdout is not None
    with trio.move_on_after(timeout):
        while needle not in b"".join(buf):
            data = await proc.stdout.receive_some(65536)
            if not data:
                raise AssertionError(f"process ended before {needle!r}: {b''.join(buf)!r}")
            buf.append(bytes(data))
        return b"".join(buf)
    raise AssertionError(f"no {needle!r} within {timeout} s in: {b''.join(buf).decode()}")


async def line_starting(
    proc: trio.Process, buf: list[bytes], prefix: str, timeout: float
) -> str:
    """The first whole line `proc` prints that starts with `prefix` (a code it prints on a
    line of its own), read into `buf` with `read_until`."""
    await read_until(proc, buf, b"\n" + prefix.encode(), timeout)
    await read_until(proc, buf, b"\n", 10)  # the rest of that line
    return next(x for x in b"".join(buf).decode().splitlines() if x.startswith(prefix))


async def quit_all(procs: Sequence[trio.Process], timeout: float = 15) -> None:
    """Ask every lobby to /quit and check each exits cleanly."""
    for proc in procs:
        assert proc.stdin is not None
        await proc.stdin.send_all(b"/quit\n")
    with trio.fail_after(timeout):
        for proc in procs:
            assert await proc.wait() == 0


async def kill_leftovers(procs: Sequence[trio.Process]) -> None:
    """After a failure, leave no child process behind."""
    for proc in procs:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
