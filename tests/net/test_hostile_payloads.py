"""Application payloads led by a value that is not a str (`[[0], 1]`, `[{"a": 1}]`), sent in a
`d` record by a seated peer, are dropped and the link stays up (docs/protocol.md 2.10): the
real `host` and `join` processes on loopback keep their table, show the sender's next chat
line, and a new player still joins. The hostile peer is a mesh of this test, seated like any
other (a joiner at the real host; a host for the real joiner)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import trio
from cli_helpers import COMMAND, ENV, invite_code, kill_leftovers, read_until, start_line_joiner

from buraco_p2p.net.channel.identity import Identity
from buraco_p2p.net.mesh.mesh import Mesh
from buraco_p2p.net.mesh.startup import host_table, join_table
from buraco_p2p.net.reach.invite import Invite
from buraco_p2p.net.table.appmessages import chat_message

# Led by an array, a map, nothing, an integer, bytes and nil: no tag a receiver knows.
HOSTILE: list[Any] = [[[0], 1], [{"a": 1}], [[]], [{}], [], [5, "x"], [b"chat", "x"], [None]]


async def _say_hostile_things(mesh: Mesh, to: Any) -> None:
    for payload in HOSTILE:
        await mesh.send(to, payload)
    await mesh.send(to, chat_message("still here"))


async def test_a_joiner_s_hostile_payloads_leave_the_host_and_the_other_joiner_up(
    tmp_path: Path,
) -> None:
    args = ["host", "--line", "--auto-approve", "--listen", "127.0.0.1", "--nick", "ana",
            "--data-dir", str(tmp_path / "data"),
            "--config-dir", str(tmp_path / "ana")]  # fmt: skip
    host = await trio.lowlevel.open_process(
        [*COMMAND, *args], stdin=-1, stdout=-1, env=ENV
    )  # fmt: skip
    hout: list[bytes] = []
    jout: list[bytes] = []
    joiner: trio.Process | None = None
    try:
        await read_until(host, hout, b"\nBRC-", 30)
        await read_until(host, hout, b"\n", 5)
        invite = Invite.from_text(invite_code(hout))
        joiner = await start_line_joiner(invite.to_text(), tmp_path / "bia-data")
        await read_until(joiner, jout, b"seated (2/", 30)
        async with join_table(Identity.generate("evil"), invite) as evil:
            with trio.fail_after(30):
                await evil.wait_all_up(3)
            assert evil.roster is not None
            for peer in evil.peers():
                await _say_hostile_things(evil, peer)
            await read_until(host, hout, b"<evil> still here", 20)
            await read_until(joiner, jout, b"<evil> still here", 20)
            # The table is still open: one more player is seated, and everyone sees it.
            async with join_table(Identity.generate("dan"), invite) as dan:
                with trio.fail_after(30):
                    await dan.wait_all_up(4)
                await read_until(host, hout, b"table is complete", 20)
                await read_until(joiner, jout, b"table is complete", 20)
        assert host.returncode is None and joiner.returncode is None
        for out in (hout, jout):
            assert b"Traceback" not in b"".join(out), b"".join(out).decode()
    finally:
        await kill_leftovers([p for p in (host, joiner) if p is not None])


async def test_a_host_s_hostile_payloads_leave_the_joiner_up(tmp_path: Path) -> None:
    async with host_table(Identity.generate("evil"), seats=3) as evil:
        joiner = await start_line_joiner(evil.invite.to_text(), tmp_path / "bia-data")
        jout: list[bytes] = []
        try:
            await read_until(joiner, jout, b"seated (2/", 30)
            peer = evil.peers()[0]
            with trio.fail_after(30):
                while not evil.is_up(peer):
                    await trio.sleep(0.02)
            await _say_hostile_things(evil, peer)
            await read_until(joiner, jout, b"<evil> still here", 20)
            # and it goes on: a third player is seated and the joiner sees the table complete
            async with join_table(Identity.generate("dan"), evil.invite):
                await read_until(joiner, jout, b"table is complete", 30)
            assert joiner.returncode is None, b"".join(jout).decode()
        finally:
            await kill_leftovers([joiner])
