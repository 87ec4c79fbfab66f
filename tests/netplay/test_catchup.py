"""Catching up is bounded, over a real mesh on loopback (docs/protocol.md 2.10): a burst of
stale `sync`s (what a peer queued while it was away) costs one answer between them, a peer
that took an answer in and asks again is answered again, and a send buffer that fills is
one warning line for that peer, not one per message."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
import trio
from trio.testing import wait_all_tasks_blocked

from buraco_p2p.bots.selfplay import resolve_rules
from buraco_p2p.net.channel.identity import Identity
from buraco_p2p.net.mesh.mesh import MeshConfig
from buraco_p2p.net.mesh.startup import join_table
from buraco_p2p.net.reach.invite import Invite
from buraco_p2p.play.driver import Driver
from buraco_p2p.play.node import open_node
from buraco_p2p.session import decode_entry

from .lost import seated

TIMEOUT_MS = 60_000


async def test_a_burst_of_stale_syncs_is_answered_once(tmp_path: Path) -> None:
    rules = resolve_rules("classic", (), players=2)
    ana, bia = Identity.generate("ana"), Identity.generate("bia")
    invites: list[Invite] = []
    drivers: list[Driver] = []

    async def host() -> None:
        async with open_node(
            ana, tmp_path / "ana", rules=rules, timeout_ms=TIMEOUT_MS, on_invite=invites.append,
        ) as driver:
            drivers.append(driver)
            await trio.sleep_forever()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(host)
        with trio.fail_after(30):
            while not invites:
                await trio.sleep(0.01)
        async with join_table(bia, invites[0]) as b:
            peer = await seated(bia, b, drivers)
            logged = len(drivers[0].peer.log)

            host = drivers[0]
            last = logged - 1
            got: list[int] = []

            async def settled() -> list[int]:
                """Everything the host has for bia, once the host has taken in all she sent
                and handed all it queued, and she has taken all of that in."""
                del got[:]
                with trio.fail_after(30):
                    while True:
                        while True:
                            try:
                                _key, msg = b.receive_nowait()
                            except trio.WouldBlock:
                                break
                            if msg[0] == "e":
                                got.append(decode_entry(msg[1]).index)
                        await wait_all_tasks_blocked(0.05)
                        numbered, consumed = b.handed(ana.public)
                        if (
                            numbered == consumed
                            and not host._send_out.statistics().current_buffer_used
                            and host.mesh.handed(bia.public)[0]
                            == b.records[ana.public].channel.consumed_next
                        ):
                            return list(got)

            await settled()
            # What a peer away for 50 s has queued: 50 stale syncs, sent before it reads.
            for _ in range(50):
                await b.send(peer, ["sync", 0])
            answered = await settled()
            assert answered.count(0) == 1, (answered, logged)
            assert sorted(answered) == list(range(logged))
            # Having taken that in, it asks again from the last entry (as a peer that lost
            # it would): it is answered again, since it consumed what it asks for.
            await b.send(peer, ["sync", last])
            assert await settled() == [last]
        nursery.cancel_scope.cancel()


async def test_a_full_send_buffer_is_one_line_per_peer_until_it_drains(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """bia stops reading; the host's buffer for her holds 64 messages; 200 chat lines later
    the host has said so once, and once she reads again and it drains, it says so once."""
    rules = resolve_rules("classic", (), players=2)
    ana, bia = Identity.generate("ana"), Identity.generate("bia")
    invites: list[Invite] = []
    drivers: list[Driver] = []
    caplog.set_level(logging.INFO, logger="buraco_p2p.play.driver")

    async def host() -> None:
        async with open_node(
            ana, tmp_path / "ana", rules=rules, timeout_ms=TIMEOUT_MS, on_invite=invites.append,
            config=MeshConfig(max_buffer=64),
        ) as driver:  # fmt: skip
            drivers.append(driver)
            await trio.sleep_forever()

    def full_lines() -> list[str]:
        return [r.getMessage() for r in caplog.records if "send failed" in r.getMessage()]

    async with trio.open_nursery() as nursery:
        nursery.start_soon(host)
        with trio.fail_after(30):
            while not invites:
                await trio.sleep(0.01)
        async with join_table(bia, invites[0]) as b:
            await seated(bia, b, drivers)
            driver = drivers[0]
            for i in range(200):
                driver.chat(f"line {i}")
            with trio.fail_after(20):
                while not full_lines():
                    await trio.sleep(0.01)
            for i in range(200):
                driver.chat(f"more {i}")
            # every chat line has been offered to the mesh once the host's send queue is empty
            with trio.fail_after(20):
                while driver._send_out.statistics().current_buffer_used:
                    await trio.sleep(0.01)
            assert len(full_lines()) == 1, full_lines()
            # bia reads again: the buffer drains, and the next message fits
            with trio.fail_after(20):
                while not any("again" in r.getMessage() for r in caplog.records):
                    try:
                        b.receive_nowait()
                    except trio.WouldBlock:
                        driver.chat("still there?")
                        await trio.sleep(0.01)
            assert len(full_lines()) == 1
        nursery.cancel_scope.cancel()
