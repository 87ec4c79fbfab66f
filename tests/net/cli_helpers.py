"""Shared helpers for tests that drive the real `buraco-p2p` command in child processes."""

from __future__ import annotations

from collections.abc import Sequence

import trio


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
