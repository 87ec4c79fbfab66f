"""The match's application messages as docs/protocol.md 2.10 states them, over real meshes on
loopback: a malformed `gsig` is dropped (the host still takes the party's good one), and a
chat line reaches the line console with every terminal control replaced."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

import trio

from buraco_p2p.bots.selfplay import resolve_rules
from buraco_p2p.net.channel.identity import Identity
from buraco_p2p.net.mesh.startup import host_table, join_table
from buraco_p2p.net.reach.invite import Invite
from buraco_p2p.play.console import console
from buraco_p2p.play.driver import Driver
from buraco_p2p.play.genesis import check_terms, sign_terms
from buraco_p2p.play.node import agree_genesis, open_node
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


async def test_match_chat_reaches_the_line_console_without_terminal_controls(
    tmp_path: Path,
) -> None:
    rules = resolve_rules("classic", (), players=2)
    ana, bia = Identity.generate("ana"), Identity.generate("bia")
    invites: list[Invite] = []
    drivers: dict[str, Driver] = {}
    shown: list[str] = []

    async def run(name: str, **kw: Any) -> None:
        identity = ana if name == "ana" else bia
        async with open_node(identity, tmp_path / name, **kw) as driver:
            drivers[name] = driver
            await trio.sleep_forever()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(partial(run, "ana", rules=rules, on_invite=invites.append))
        with trio.fail_after(30):
            while not invites:
                await trio.sleep(0.01)
            nursery.start_soon(partial(run, "bia", invite=invites[0]))
            while len(drivers) < 2:
                await trio.sleep(0.01)
            _send, lines = trio.open_memory_channel[str](1)
            nursery.start_soon(console, drivers["ana"], lines, shown.append)
            drivers["bia"].chat("boa \x1b[2J\x1b[Hnoite\x07")
            while not any(line.startswith("<bia>") for line in shown):
                await trio.sleep(0.01)
        line = next(line for line in shown if line.startswith("<bia>"))
        assert line == "<bia> boa \ufffd[2J\ufffd[Hnoite\ufffd"
        nursery.cancel_scope.cancel()
