"""What `Driver.agree` does for a person at the table, over a real mesh on loopback: the host
that has agreed to `end` and then types `replace` is told it already agreed (it used to recurse
through the host's replacer until the stack ran out), and the choices a screen offers name the
party waiting past the timeout (before the seats are drawn, no "replace": a bot can take a
seat only once they are). The host's clock is injected, so the timeout passes when the
test says so."""

from __future__ import annotations

from pathlib import Path

import trio

from buraco_p2p.bots.selfplay import resolve_rules
from buraco_p2p.net.channel.identity import Identity
from buraco_p2p.net.mesh.startup import join_table
from buraco_p2p.net.reach.invite import Invite
from buraco_p2p.play.driver import Driver
from buraco_p2p.play.node import open_node

from .lost import seated

TIMEOUT_MS = 1000


class Clock:
    def __init__(self) -> None:
        self.value = 0.0

    def __call__(self) -> float:
        return self.value


async def test_replace_after_agreeing_says_so_and_the_choices_name_the_party(
    tmp_path: Path,
) -> None:
    rules = resolve_rules("classic", (), players=3)
    ana, bia, caio = (Identity.generate(n) for n in ("ana", "bia", "caio"))
    clock = Clock()
    invites: list[Invite] = []
    drivers: list[Driver] = []

    async def host() -> None:
        async with open_node(
            ana, tmp_path / "ana", rules=rules, timeout_ms=TIMEOUT_MS, on_invite=invites.append,
            clock=clock, tick_every=0.01,
        ) as driver:  # fmt: skip
            drivers.append(driver)
            await trio.sleep_forever()

    async def person() -> None:  # a player who never types end, void or replace
        async with open_node(bia, tmp_path / "bia", invite=invites[0]):
            await trio.sleep_forever()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(host)
        with trio.fail_after(30):
            while not invites:
                await trio.sleep(0.01)
        nursery.start_soon(person)
        async with join_table(caio, invites[0]) as c:  # caio signs the terms, then is silent
            with trio.fail_after(60):
                await seated(caio, c, drivers, timeout=60)
                d = drivers[0]
                gone = list(d.peer.table.keys).index(caio.public)
                other = list(d.peer.table.keys).index(bia.public)
                # bia's commitment is here (applied, or held behind caio's): only caio is late
                while other in d.peer._missing():
                    await trio.sleep(0.01)
            assert d.choices() == {}  # nobody has kept the table waiting yet
            clock.value = 5.0
            with trio.fail_after(30):
                while gone not in d.overdue:
                    await trio.sleep(0.01)
            choices = d.choices()
            # the seats are not drawn yet: no bot can take one, and any void closes the log
            assert set(choices) == {"end", "void"}
            assert all("caio" in words for words in choices.values())
            assert d.agree("replace").startswith(
                "no agreement proposed: a bot can take a seat only once the seats are drawn"
            )
            assert d.agree("end") == "proposed: end"  # bia never joins: the round stays open
            assert d.agree("replace") == "already agreed to end (missing: caio)"
            assert d.agree("void") == "already agreed to end (missing: caio)"
            assert d.choices() == {}
        nursery.cancel_scope.cancel()
