"""A joiner on the full-screen lobby whose seat the host frees leaves, as a line joiner does.

The joiner is the real client (`run_full_screen`, keys from a prompt_toolkit pipe, an 80x24
dummy terminal) in this thread, which owns the signals the client needs; the host is a real
mesh and line lobby in a second thread, on 127.0.0.1. The host frees the joiner's seat with
`/kick 2` once the joiner's lobby shows the table full; the client must end by itself, say
why in one line on the restored terminal and exit with the line front end's code. A client
that stays on its lobby screen is sent `q` after a while, so that it fails instead of hanging.
"""

from __future__ import annotations

import queue
import threading
from pathlib import Path

import pytest
import trio
from prompt_toolkit.input import PipeInput, create_pipe_input

from buraco_p2p.net.channel.identity import Identity
from buraco_p2p.net.mesh.commands import EXIT_REFUSED
from buraco_p2p.net.mesh.lobby import Lobby
from buraco_p2p.net.mesh.mesh import auto_approve
from buraco_p2p.net.mesh.startup import host_table
from buraco_p2p.ui.lobby_model import LobbyModel
from buraco_p2p.ui.lobby_screen import lobby_rows
from buraco_p2p.ui.netplay import LobbyFeed, run_full_screen
from tests.ui.ui_helpers import WAIT, SizedOutput, text_of

KICKED_LINE = "buraco-p2p: the host removed you from the table (seat 2 is free again)"


def _full_at(model: LobbyModel) -> bool:
    """The joiner's lobby is on screen and draws both seats taken."""
    if model.lobby is None or not model.active:
        return False
    return "Seats 2/2" in text_of(lobby_rows(model, 80, 24, 0.0))


class _Host(threading.Thread):
    """A host of two seats that frees seat 2 once `joiner` shows the table full."""

    def __init__(self, joiner: LobbyModel, keys: PipeInput) -> None:
        super().__init__(daemon=True)
        self.joiner = joiner
        self.keys = keys
        self.invites: queue.Queue[str] = queue.Queue()
        self.done = threading.Event()
        self.log: list[str] = []
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            trio.run(self._main)
        except BaseException as exc:  # reported by the test, not lost in the thread
            self.error = exc

    async def _main(self) -> None:
        alice = Identity.from_seed(b"\x55" * 32, "Alice")
        async with (
            host_table(alice, listen_host="127.0.0.1", approve=auto_approve, seats=2) as mesh,
            trio.open_nursery() as nursery,
        ):
            lobby = Lobby(mesh, self.log.append)
            nursery.start_soon(lobby.until_ready)
            self.invites.put(mesh.invite.to_text())
            with trio.fail_after(WAIT):
                while not _full_at(self.joiner):
                    await trio.sleep(0.01)
                # The kick reaches the joiner over its link: a peer whose link is down at
                # that moment learns of it only when it comes back (the mesh's concern).
                await mesh.wait_all_up()
                await lobby.handle_line("/kick 2")
                assert mesh.roster is not None and len(mesh.roster.members) == 1
            if not await trio.to_thread.run_sync(self.done.wait, WAIT):
                self.keys.send_text("q")  # a client that stays: quit it, so the test fails
                await trio.to_thread.run_sync(self.done.wait, WAIT)
            nursery.cancel_scope.cancel()


def test_a_kicked_joiner_leaves_the_lobby_screen_with_one_line_and_exit_3(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bob = Identity.from_seed(b"\x66" * 32, "Bob")
    joiner: LobbyFeed | None = None
    host: _Host | None = None
    with create_pipe_input() as keys:
        try:
            placeholder = LobbyModel("Bob", bob.public.fingerprint(), rules=None)
            host = _Host(placeholder, keys)
            host.start()
            code = host.invites.get(timeout=WAIT)
            joiner = LobbyFeed(bob, tmp_path / "bob", code=code, listen="127.0.0.1")
            host.joiner = joiner.model
            rc = run_full_screen(joiner, lobby=joiner.model, input=keys,
                                 output=SizedOutput(80, 24))  # fmt: skip
        finally:
            if host is not None:
                host.done.set()
                host.join(WAIT)
    assert host is not None and joiner is not None
    assert host.error is None, host.error
    assert not host.is_alive()
    assert rc == EXIT_REFUSED
    err = capsys.readouterr().err
    assert err.strip().splitlines() == [KICKED_LINE], err
    # The joiner had been on its lobby screen, told of the kick there first.
    assert any("you (" in line and "removed by the host" in line for line in joiner.model.log)
