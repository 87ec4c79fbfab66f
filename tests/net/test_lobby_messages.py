"""The lobby's application messages as docs/protocol.md 2.10 states them: a malformed `ready`
or `rules` (or one not from the host) is dropped, shown nowhere and never handed to the match;
the well-formed ones mark a seat ready and show the host's rules."""

from __future__ import annotations

from typing import Any

import trio
from mesh_helpers import table_of_four

from buraco_p2p.net.lobby import MAX_RULE_OVERRIDES, MAX_RULE_TEXT, Lobby

MALFORMED_FROM_THE_HOST: list[Any] = [
    ["ready", 1],
    ["ready", "again"],
    ["rules"],
    ["rules", "classic"],
    ["rules", "classic", [], "extra"],
    ["rules", 7, []],
    ["rules", "classic", "target_score=2500"],
    ["rules", "classic", [3000]],
    ["rules", "classic", ["k=v"] * (MAX_RULE_OVERRIDES + 1)],
    ["rules", "classic", ["k=" + "v" * (MAX_RULE_TEXT - 1)]],
]


async def test_malformed_lobby_messages_are_dropped_and_never_reach_the_match() -> None:
    async with table_of_four() as meshes, trio.open_nursery() as nursery:
        host, bia, caio = meshes[0], meshes[1], meshes[2]
        lines: list[str] = []
        lobby = Lobby(bia, lines.append)
        _send, recv = trio.open_memory_channel[str](8)
        nursery.start_soon(lobby.run, recv)
        for message in MALFORMED_FROM_THE_HOST:
            await host.broadcast(message)
        await caio.broadcast(["rules", "italian", []])  # well formed, but not the host's
        await host.broadcast(["rules", "classic", ["k=" + "v" * (MAX_RULE_TEXT - 2)]])
        await caio.broadcast(["ready"])
        # Each link keeps its order: once these show, everything sent before them was handled.
        await host.broadcast(["chat", "after the host's"])
        await caio.broadcast(["chat", "after caio's"])
        with trio.fail_after(10):
            while not any("after the host's" in x for x in lines) or not any(
                "after caio's" in x for x in lines
            ):
                await trio.sleep(0.01)
        chosen = [x for x in lines if "chose the rules" in x]
        assert len(chosen) == 1 and "classic with k=vvv" in chosen[0], lines
        assert lobby.ready == {caio.me.raw}, "only caio's well-formed ready counts"
        assert lobby.backlog == [], lobby.backlog
        nursery.cancel_scope.cancel()
