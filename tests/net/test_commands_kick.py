"""A line-mode joiner (`buraco-p2p join`, a real child process) whose seat the host frees
leaves the lobby: one line saying why, exit code 3, as the full-screen client does
(tests/ui/test_lobby_kick.py checks the same line and code there)."""

from __future__ import annotations

from pathlib import Path

import trio
from cli_helpers import kill_leftovers, read_until, start_line_joiner
from mesh_helpers import FAST

from buraco_p2p.net.channel.identity import Identity
from buraco_p2p.net.mesh.commands import EXIT_REFUSED, exit_status
from buraco_p2p.net.mesh.lobby import Lobby
from buraco_p2p.net.mesh.mesh import auto_approve
from buraco_p2p.net.mesh.startup import host_table

KICKED_LINE = b"buraco-p2p: the host removed you from the table (seat 2 is free again)"


async def test_a_kicked_line_joiner_exits_3_with_one_line(tmp_path: Path) -> None:
    ana = Identity.generate("ana")
    async with (
        host_table(ana, listen_host="127.0.0.1", approve=auto_approve, seats=2,
                   config=FAST) as mesh,
        trio.open_nursery() as nursery,
    ):  # fmt: skip
        lobby = Lobby(mesh, lambda text: None)
        nursery.start_soon(lobby.until_ready)
        joiner = await start_line_joiner(mesh.invite.to_text(), tmp_path)
        buf: list[bytes] = []
        try:
            await read_until(joiner, buf, b"every seat is taken", 30)
            with trio.fail_after(30):
                await mesh.wait_all_up()  # the kick goes over the joiner's link
            await lobby.handle_line("/kick 2")
            await read_until(joiner, buf, b"was removed by the host", 15)
            with trio.fail_after(15):
                assert await joiner.wait() == EXIT_REFUSED
            assert joiner.stderr is not None
            err = await joiner.stderr.receive_some(65536)
            assert err.strip().splitlines() == [KICKED_LINE], err
        finally:
            await kill_leftovers([joiner])
        nursery.cancel_scope.cancel()


def test_one_mapping_of_failures_to_exit_codes() -> None:
    from buraco_p2p.net.channel.errors import IdentityError, MeshError
    from buraco_p2p.net.mesh.commands import SeatLost, UsageError
    from buraco_p2p.net.reach.invite import InviteError
    from buraco_p2p.net.table.table import JoinRefused

    assert exit_status(UsageError("u")) == (2, "u")
    assert exit_status(IdentityError("i")) == (2, "i")
    assert exit_status(JoinRefused("no")) == (EXIT_REFUSED, "no")
    assert exit_status(SeatLost("kicked")) == (EXIT_REFUSED, "kicked")
    assert exit_status(MeshError("m")) == (1, "m")
    assert exit_status(InviteError("bad")) == (1, "bad")
    assert exit_status(ConnectionRefusedError(111, "Connection refused")) == (
        1,
        "Connection refused",
    )
    assert exit_status(KeyboardInterrupt()) == (130, "")
    # trio wraps a task's failure in a group of one: it stands for that failure
    assert exit_status(BaseExceptionGroup("g", [JoinRefused("full")])) == (EXIT_REFUSED, "full")
    assert exit_status(ValueError("a bug")) is None
    two = ExceptionGroup("g", [MeshError("a"), MeshError("b")])
    assert exit_status(two) is None
