"""The full-screen lobby reads the host's `["rules", preset, [overrides]]` by the same check
and bounds as the line lobby (docs/protocol.md 2.10): a malformed one leaves the rules shown
as they were and says so; one at the bounds is taken. Over real meshes on 127.0.0.1."""

from __future__ import annotations

import trio

from buraco_p2p.net.channel.identity import Identity
from buraco_p2p.net.mesh.lobby import Lobby
from buraco_p2p.net.mesh.startup import host_table, join_table
from buraco_p2p.net.table.appmessages import MAX_RULE_OVERRIDES, MAX_RULE_TEXT
from buraco_p2p.ui.lobby_model import LobbyModel

CANNOT_READ = "the host sent rules this client cannot read"


async def test_a_joiners_model_drops_malformed_rules_and_takes_them_at_their_bounds() -> None:
    ana, bia = Identity.generate("ana"), Identity.generate("bia")
    async with (
        host_table(ana, seats=2) as host,
        join_table(bia, host.invite) as joiner,
        trio.open_nursery() as nursery,
    ):
        model = LobbyModel("bia", bia.public.fingerprint(), rules=None)
        lobby = Lobby(joiner, model.out)
        model.attach(lobby)
        _send, recv = trio.open_memory_channel[str](8)
        nursery.start_soon(lobby.run, recv)

        async def through(mark: str) -> None:
            # The link keeps its order: once `mark` shows, what came before it was handled.
            await host.broadcast(["chat", mark])
            with trio.fail_after(10):
                while not any(mark in x for x in model.log):
                    await trio.sleep(0.01)

        for malformed in (
            ["rules", "italian"],
            ["rules", "italian", ["k=v"] * (MAX_RULE_OVERRIDES + 1)],
            ["rules", "italian", ["k=" + "v" * (MAX_RULE_TEXT - 1)]],
            ["rules", 7, []],
        ):
            model.rules_note = ""
            await host.broadcast(malformed)
            await through(f"after {malformed!r}")
            assert model.rules_note == CANNOT_READ, malformed
            assert model.preset == "classic" and model.overrides == (), malformed
        at_bounds = ("k=" + "v" * (MAX_RULE_TEXT - 2),) * MAX_RULE_OVERRIDES
        await host.broadcast(["rules", "italian", list(at_bounds)])
        await through("after the good one")
        assert model.preset == "italian" and model.overrides == at_bounds
        assert model.rules_note != CANNOT_READ
        nursery.cancel_scope.cancel()
