"""The genesis agreement's messages as docs/protocol.md 2.10 states them, over real meshes on
loopback: a malformed `gsig` is dropped, and the host still takes the party's good one."""

from __future__ import annotations

from typing import Any

import trio

from buraco_p2p.bots.selfplay import resolve_rules
from buraco_p2p.net.identity import Identity
from buraco_p2p.net.mesh import host_table, join_table
from buraco_p2p.play.genesis import check_terms, sign_terms
from buraco_p2p.play.node import agree_genesis
from buraco_p2p.session import parse_genesis


async def test_a_malformed_gsig_is_dropped_and_the_good_one_counts() -> None:
    rules = resolve_rules("classic", (), players=2)
    ana, bia = Identity.generate("ana"), Identity.generate("bia")
    async with (
        host_table(ana, seats=2) as host,
        join_table(bia, host.invite) as joiner,
        trio.open_nursery() as nursery,
    ):
        agreed: list[Any] = []

        async def propose() -> None:
            agreed.append(await agree_genesis(host, ana, rules, 60_000))

        nursery.start_soon(propose)
        with trio.fail_after(20):
            peer, terms = await joiner.receive()
            while terms[0] != "terms":
                peer, terms = await joiner.receive()
            assert joiner.roster is not None
            check_terms(terms[1], joiner.roster.members, bia.public)
            good = sign_terms(bia, joiner.table_id, terms[1])
            for bad in ("not a signature", good[:63], None):
                await joiner.send(peer, ["gsig", bad])
            await joiner.send(peer, ["gsig", good])
            while not agreed:
                await trio.sleep(0.01)
        genesis, _backlog = agreed[0]
        assert [k.raw for k in parse_genesis(genesis).keys] == [ana.public.raw, bia.public.raw]
