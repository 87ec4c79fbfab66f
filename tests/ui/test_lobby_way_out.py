"""The full-screen lobby's way out: a joiner that cannot reach the host is told once, after
its first minute, why and what would help, and keeps trying without a line per attempt; a
host with seats still empty after its first minute is told which and what it knows of why.
The first minute is shortened through `$BURACO_P2P_ADVICE_AFTER`; everything is on 127.0.0.1."""

from __future__ import annotations

import asyncio
import os
import socket
from pathlib import Path

import pytest
import trio

from buraco_p2p.bots.selfplay import resolve_rules
from buraco_p2p.net.channel.identity import Identity
from buraco_p2p.net.mesh.wayout import ADVICE_ENV
from buraco_p2p.net.reach.invite import Endpoint, Invite
from buraco_p2p.ui.netplay import LobbyFeed
from tests.ui.lobby_helpers import host_lobby
from tests.ui.ui_helpers import until


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def test_a_full_screen_joiner_is_told_once_and_keeps_trying(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ADVICE_ENV, "0.8")
    host = Identity.generate("ana").public.raw
    code = Invite(os.urandom(16), os.urandom(16), host,
                  (Endpoint.parse("127.0.0.1", _closed_port()),)).to_text()  # fmt: skip
    feed = LobbyFeed(Identity.generate("bia"), tmp_path, code=code, listen="127.0.0.1")

    async def run() -> bool:
        with trio.move_on_after(3.5) as cut:  # attempts at about 0, 1 and 3 s; advice at 0.8
            await feed.run()
        return cut.cancelled_caught

    assert trio.run(run), "the joiner stopped trying"
    log = feed.model.log
    advice = [i for i, line in enumerate(log) if "has not answered for a minute" in line]
    assert len(advice) == 1, log
    assert any("what would help" in line and "--turn USER:PASSWORD@IP:PORT" in line
               for line in log), log  # fmt: skip
    tries = [i for i, line in enumerate(log) if "trying again" in line]
    assert tries and max(tries) < advice[0], log  # none after the advice
    assert any(line.startswith("*   tried: 127.0.0.1:") for line in log), log


def test_a_full_screen_host_is_told_which_seat_is_still_empty(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ADVICE_ENV, "0.5")

    async def main() -> None:
        feed = LobbyFeed(Identity.generate("ana"), tmp_path, rules=resolve_rules("us", [], 2),
                         preset="us", listen="127.0.0.1")  # fmt: skip
        async with host_lobby(feed) as h:
            said = "* seat 2 of 2 still empty after a minute"
            await until(lambda: any(line.startswith(said) for line in feed.model.log), said)
            await asyncio.sleep(1.0)
            assert sum(line.startswith(said) for line in feed.model.log) == 1
            assert any("every address in your invite is inside your network" in line
                       for line in feed.model.log), feed.model.log  # fmt: skip
            await h.quit("q")

    asyncio.run(main())


def test_a_joiner_whose_request_the_host_has_is_not_told_how_to_reach_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The host has the request and a person is deciding: no advice about reaching it."""
    from buraco_p2p.net.mesh.mesh import JoinRequest
    from buraco_p2p.net.mesh.startup import host_table

    monkeypatch.setenv(ADVICE_ENV, "0.8")

    async def never(request: JoinRequest) -> bool:
        await trio.sleep_forever()
        raise AssertionError

    async def run() -> LobbyFeed:
        async with host_table(Identity.generate("ana"), listen_host="127.0.0.1",
                              approve=never, seats=2) as mesh:  # fmt: skip
            feed = LobbyFeed(Identity.generate("bia"), tmp_path, code=mesh.invite.to_text(),
                             listen="127.0.0.1")  # fmt: skip
            with trio.move_on_after(2.5):
                await feed.run()
            return feed

    feed = trio.run(run)
    log = feed.model.log
    assert not any("has not answered for a minute" in line for line in log), log
    assert feed.model.status == "the host has your request: waiting for its answer"
