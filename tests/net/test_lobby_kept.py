"""What a lobby keeps for the match (docs/protocol.md 2.10): only the agreement's and the log's
messages (`terms`, `gsig`, `e`, `sync`, `at`), at most `MAX_BACKLOG` from each sender. A seated
peer that floods the lobby with payloads of unknown tags, or with kept ones past its share,
makes it hold nothing more, and cannot push out another peer's (the host's `terms`)."""

from __future__ import annotations

from typing import Any

import trio
from mesh_helpers import table_of_four

from buraco_p2p.net.mesh import lobby as lobby_module
from buraco_p2p.net.mesh.lobby import Lobby

KEPT: list[Any] = [["terms", {}], ["gsig", b"s" * 64], ["e", b"entry"], ["sync", 0], ["at", 3]]
DROPPED: list[Any] = [["zz", 1], ["newer", {"k": 1}], {"text": "hi"}, [], [7], "e", ["E", b""]]


async def _settle(lobby: Lobby, lines: list[str], sender: Any, mark: str) -> None:
    await sender.broadcast(["chat", mark])
    with trio.fail_after(10):
        while not any(mark in x for x in lines):
            await trio.sleep(0.01)


async def test_a_lobby_keeps_only_the_matchs_messages_for_the_match() -> None:
    assert {m[0] for m in KEPT} == {"terms", "gsig", "e", "sync", "at"}  # 2.10
    async with table_of_four() as meshes, trio.open_nursery() as nursery:
        host, bia, caio = meshes[0], meshes[1], meshes[2]
        lines: list[str] = []
        lobby = Lobby(bia, lines.append)
        _send, recv = trio.open_memory_channel[str](8)
        nursery.start_soon(lobby.run, recv)
        for message in DROPPED + KEPT:
            await caio.broadcast(message)
            await host.broadcast(message)
        await _settle(lobby, lines, caio, "end of caio's")
        await _settle(lobby, lines, host, "end of the host's")
        by_sender = {who.me: [m for k, m in lobby.backlog if k == who.me] for who in (host, caio)}
        assert by_sender[host.me] == KEPT and by_sender[caio.me] == KEPT, lobby.backlog
        nursery.cancel_scope.cancel()


async def test_a_flooding_peer_fills_only_its_own_share(monkeypatch: Any) -> None:
    monkeypatch.setattr(lobby_module, "MAX_BACKLOG", 3)
    async with table_of_four() as meshes, trio.open_nursery() as nursery:
        host, bia, caio = meshes[0], meshes[1], meshes[2]
        lines: list[str] = []
        lobby = Lobby(bia, lines.append)
        _send, recv = trio.open_memory_channel[str](8)
        nursery.start_soon(lobby.run, recv)
        for n in range(10):
            await caio.broadcast(["sync", n])
        await _settle(lobby, lines, caio, "end")
        await host.broadcast(["terms", {"players": []}])
        await _settle(lobby, lines, host, "end of the host's")
        assert [m for k, m in lobby.backlog if k == caio.me] == [["sync", n] for n in range(3)]
        assert [m for k, m in lobby.backlog if k == host.me] == [["terms", {"players": []}]]
        nursery.cancel_scope.cancel()
