"""The host's genesis never waits on nobody: while a seated player has not signed the
table's terms it says whom it waits for, "(offline)" once that player's link is down; and a
player who left and joins again with the same code is sent the terms (and the host's
`ready`, which its new lobby needs) again, signs them, and the match's genesis is made.

Two real meshes on loopback (the host's and a joiner's); the joiner first leaves without
signing, as a client that died at "ready" would.
"""

from __future__ import annotations

import trio

from buraco_p2p.net.channel.identity import Identity
from buraco_p2p.net.mesh.startup import host_table, join_table
from buraco_p2p.play.genesis import sign_terms
from buraco_p2p.play.node import agree_genesis
from tests.net.mesh_helpers import FAST


async def _until(said: list[tuple[str, ...]], what: tuple[str, ...]) -> None:
    with trio.fail_after(20):
        while not said or said[-1] != what:
            await trio.sleep(0.05)


def test_the_host_says_whom_it_waits_for_and_sends_the_terms_again() -> None:
    from buraco_p2p.bots.selfplay import resolve_rules

    rules = resolve_rules("classic", [], 2, None)
    host_id, bia = Identity.generate("ana"), Identity.generate("bia")
    said: list[tuple[str, ...]] = []

    async def main() -> None:
        async with (
            host_table(host_id, config=FAST, seats=2) as host,
            trio.open_nursery() as nursery,
        ):
            done: list[object] = []

            async def agree() -> None:
                done.append(await agree_genesis(host, host_id, rules, 60_000,
                                                waiting=said.append))  # fmt: skip

            async with join_table(bia, host.invite, config=FAST) as mesh:
                nursery.start_soon(agree)
                with trio.fail_after(20):
                    tag, body = "", None
                    while tag != "terms":
                        _, (tag, *rest) = await mesh.receive()
                        body = rest[0] if rest else None
                await _until(said, ("bia",))
            # bia's client is gone without signing: said, not waited on in silence
            await _until(said, ("bia (offline)",))
            assert not done
            async with join_table(bia, host.invite, config=FAST) as again:
                got: set[str] = set()
                with trio.fail_after(20):
                    while not {"ready", "terms"} <= got:
                        _, msg = await again.receive()
                        got.add(msg[0])
                        if msg[0] == "terms":
                            body = msg[1]
                await again.send(host.me, ["gsig", sign_terms(bia, again.table_id, body)])
                with trio.fail_after(20):
                    while not done:
                        await trio.sleep(0.05)
                assert said[-1] == ()
            nursery.cancel_scope.cancel()

    trio.run(main)
