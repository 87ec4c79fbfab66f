"""Driving a full-screen host lobby in a test: the host's application with its keys from a
prompt_toolkit pipe, drawing into a dummy 80x24 terminal, and joiners as further `LobbyFeed`s
in the same run (their keys go through their `LobbyModel`, as their own application would
send them). Everything talks over 127.0.0.1 only.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

from prompt_toolkit.input import PipeInput, create_pipe_input

from buraco_p2p.net.channel.identity import Identity
from buraco_p2p.ui import TableApp
from buraco_p2p.ui.netplay import LobbyFeed
from tests.ui.ui_helpers import WAIT, SizedOutput, until

__all__ = ["HostLobby", "host_lobby", "seated"]


def seated(feed: LobbyFeed) -> int:
    """How many seats `feed`'s roster fills (0 before it has one)."""
    mesh = feed.model.mesh
    roster = mesh.roster if mesh is not None else None
    return len(roster.members) if roster is not None else 0


@dataclass
class HostLobby:
    """The host's running application, its key pipe and its feed."""

    app: TableApp
    keys: PipeInput
    task: asyncio.Future[None]
    feed: LobbyFeed

    async def press(self, *typed: str) -> None:
        """Type keys at the host and wait until the application has handled them all."""
        before = self.app.keys_seen
        self.keys.send_text("".join(typed))
        await until(lambda: self.app.keys_seen >= before + len(typed), f"keys {typed!r}")

    def joiner(self, identity: Identity, root: Path) -> LobbyFeed:
        """A joiner with the host's invite, running in the host's application's trio run."""
        feed = LobbyFeed(identity, root, code=self.feed.model.invite, listen="127.0.0.1")
        self.app._spawn(feed.run)
        return feed

    def joiner_key(self, joiner: LobbyFeed, key: str) -> None:
        """A key pressed at a joiner's lobby: its intent runs in the trio run, as in its app."""
        intent = joiner.model.key(key)
        assert callable(intent)
        self.app._spawn(intent)

    async def quit(self, typed: str = "qy") -> None:
        """Leave with `typed` and wait for the application to end."""
        self.keys.send_text(typed)
        await asyncio.wait_for(self.task, WAIT)


@contextlib.asynccontextmanager
async def host_lobby(host: LobbyFeed) -> AsyncIterator[HostLobby]:
    """`host`'s application, running, once its table is open; stopped on the way out."""
    with create_pipe_input() as keys:
        app = TableApp(host, input=keys, output=SizedOutput(80, 24), lobby=host.model)
        task = asyncio.ensure_future(app.run())
        try:
            await until(lambda: host.model.lobby is not None, "the host's table")
            yield HostLobby(app, keys, task, host)
        finally:
            if not task.done():
                app.app.exit()
                await asyncio.wait_for(task, WAIT)
