"""Re-join codes (docs/protocol.md 2.15) at the full-screen table, through a real `Driver`,
`DriverFeed` and `TableApp`: a joiner's `BRJ-` line, typed in the chat input or pasted, is
never sent as chat; a valid code reaches the mesh's `moves.accept_code` (its addresses taken
for dialing) and the feed says what is dialed, a refused one says why, in the line client's
words. A host's code is shown whole in the feed at 80 columns, on a line of its own under what
it is for, and the host's reach steps reach the table's feed once the lobby has gone."""

from __future__ import annotations

import ipaddress
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
import trio
from prompt_toolkit.input import DummyInput

from buraco_p2p.net.channel.identity import Identity
from buraco_p2p.net.mesh.commands import ReachOutput
from buraco_p2p.net.mesh.mesh import Mesh
from buraco_p2p.net.mesh.meshconfig import MeshConfig
from buraco_p2p.net.reach.candidates import Candidate, CandidateKind
from buraco_p2p.net.reach.invite import Endpoint
from buraco_p2p.net.reach.rejoin import RejoinCode
from buraco_p2p.play.driver import Driver
from buraco_p2p.play.line import take_rejoin_code
from buraco_p2p.rules import PRESETS
from buraco_p2p.session import Router
from buraco_p2p.text.rejoin import HOST_CODE_LINE
from buraco_p2p.ui import Client, TableApp, render
from buraco_p2p.ui.driver_feed import DriverFeed
from buraco_p2p.ui.lobby_model import LobbyModel
from buraco_p2p.ui.lobby_reach import host_output
from buraco_p2p.ui.netplay import codes_to_feed
from buraco_p2p.ui.table_screen import code_pieces
from tests.ui.agreement_helpers import ME, seen_by, silent_table
from tests.ui.ui_helpers import SizedOutput, text_of

SECRET = b"\x00" * 32  # the mesh secret `seen_by` gives our mesh
NEW = (
    Candidate(CandidateKind.MAPPED, Endpoint(ipaddress.ip_address("127.0.0.9"), 40123)),
    Candidate(CandidateKind.HOST, Endpoint(ipaddress.ip_address("127.0.0.10"), 40124)),
)


@pytest.fixture(scope="module")
def table() -> Router:
    return silent_table()


def _code(r: Router, secret: bytes = SECRET, found: tuple[Candidate, ...] = NEW) -> str:
    return RejoinCode(found).to_text(secret, r.peers[ME].table.terms.table_id)


def _queued(driver: Driver) -> int:
    """Messages the driver has queued for the network (chat among them)."""
    return driver._send_out.statistics().current_buffer_used


@asynccontextmanager
async def _joiner(r: Router, tmp: Path) -> AsyncIterator[tuple[Driver, DriverFeed, TableApp]]:
    async with trio.open_nursery() as nursery:
        driver, feed = seen_by(r, nursery, tmp)
        app = TableApp(feed, input=DummyInput(), output=SizedOutput())
        yield driver, feed, app
        nursery.cancel_scope.cancel()


async def _intents(app: TableApp) -> None:
    """What the keys and pastes handed to the trio side (queued: the app is not running)."""
    waiting, app._waiting = app._waiting[:], []
    for fn in waiting:
        await fn()


def _lines(feed: DriverFeed) -> list[tuple[int | None, str]]:
    return [(c.seat, c.text) for c in feed.snapshot().chat]


async def test_a_code_typed_in_the_chat_input_is_dialed_and_never_sent_as_chat(
    table: Router, tmp_path: Path
) -> None:
    code = _code(table)
    async with _joiner(table, tmp_path) as (driver, feed, app):
        before = _lines(feed)
        queued = _queued(driver)
        for key in ["c", *code, "enter"]:
            app.key(key)
        await _intents(app)
        assert _queued(driver) == queued  # nothing for the network: not chat
        assert driver.mesh.moves.host_addresses == tuple(c.endpoint for c in NEW)
        new = _lines(feed)[len(before) :]
        assert new == [(None, "re-join code accepted: dialing the host at 127.0.0.9:40123, "
                              "127.0.0.10:40124 ...")]  # fmt: skip
        assert all(code not in text for _, text in new)
        # the same words as the line client's (which marks its notices with "* ")
        assert take_rejoin_code(driver.mesh.moves, code) == f"* {new[0][1]}"
        # an ordinary chat line still goes out: the check above could fail
        for key in ["c", *"hello", "enter"]:
            app.key(key)
        await _intents(app)
        assert _queued(driver) == queued + 1
        assert _lines(feed)[-1] == (table.peers[ME].table.my_seat, "hello")


async def test_a_pasted_code_is_dialed_and_a_refused_one_says_why(
    table: Router, tmp_path: Path
) -> None:
    async with _joiner(table, tmp_path) as (driver, feed, app):
        queued = _queued(driver)
        other = _code(table, secret=b"\x07" * 32)  # another table's
        app.paste(f"  {other.lower()}\n")
        await _intents(app)
        refused = ("re-join code refused: the re-join code does not belong to this table, "
                   "or a character was changed")  # fmt: skip
        assert _lines(feed)[-1] == (None, refused)
        assert driver.mesh.moves.host_addresses == ()
        bad = _code(table)[:-3] + "22"  # a character changed, and one short
        app.paste(bad)
        await _intents(app)
        said = _lines(feed)[-1]
        assert said[0] is None and said[1].startswith("re-join code refused: "), said
        assert driver.mesh.moves.host_addresses == ()
        # with the chat input open, a pasted code is a code too
        app.key("c")
        app.paste(_code(table))
        await _intents(app)
        assert _lines(feed)[-1][1].startswith("re-join code accepted: dialing the host at ")
        assert driver.mesh.moves.host_addresses == tuple(c.endpoint for c in NEW)
        assert _queued(driver) == queued  # none of them went out as chat


def _feed_rows(feed: DriverFeed, cols: int = 80, rows: int = 24) -> list[str]:
    return text_of(render(Client(feed.snapshot(), lambda m: None), cols, rows, 0.0)).splitlines()


async def test_the_hosts_code_is_whole_on_its_own_line_at_80_columns(
    table: Router, tmp_path: Path
) -> None:
    async with trio.open_nursery() as nursery:
        _, feed = seen_by(table, nursery, tmp_path)
        code = _code(table)
        feed.host_code(code)
        screen = _feed_rows(feed)
        assert f" {HOST_CODE_LINE}" in [row.rstrip() for row in screen]
        assert f" {code}" in [row.rstrip() for row in screen], "\n".join(screen)
        # the longest code (four IPv6 addresses) is wider than the screen: it is broken at its
        # dashes over rows, never cut, and the rows pasted back make the same code
        v6 = tuple(
            Candidate(CandidateKind.MAPPED, Endpoint(ipaddress.ip_address(f"2001:db8::{k}"), 40000))
            for k in range(1, 5)
        )
        long = _code(table, found=v6)
        assert len(long) > 80
        feed.host_code(long)
        screen = _feed_rows(feed)
        pieces = code_pieces(long, 79)
        assert len(pieces) > 1 and all(len(p) <= 79 for p in pieces)
        at = [row.rstrip() for row in screen].index(f" {pieces[0]}")
        shown = [row.strip() for row in screen[at : at + len(pieces)]]
        assert shown == pieces and "…" not in "".join(shown)
        assert "".join(shown) == long
        assert RejoinCode.from_text(" ".join(shown), SECRET, table.peers[ME].table.terms.table_id)
        nursery.cancel_scope.cancel()


async def test_the_hosts_reach_lines_and_code_go_to_the_table_once_the_lobby_is_gone(
    table: Router, tmp_path: Path
) -> None:
    async with trio.open_nursery() as nursery:
        _, feed = seen_by(table, nursery, tmp_path)
        model = LobbyModel("ana", "aaaa-bbbb", rules=PRESETS["classic"])
        out = host_output(model, lambda mesh: None, lambda text: feed.line(None, text))
        told = len(feed.snapshot().chat)
        out.say("* asking the router")
        assert model.log[-1] == "* asking the router" and len(feed.snapshot().chat) == told
        model.active = False  # the match has started: the table screen took over
        out.say("* no UPnP port mapping: timed out")
        assert _lines(feed)[-1] == (None, "no UPnP port mapping: timed out")
        assert model.log[-1] == "* asking the router"
        # the host's address watch (`host_reach` sets `moves.announce`) reports to the feed
        host = Mesh(Identity.from_seed(b"\x05" * 32, "host"), b"agree-feed-tabl1", SECRET,
                    nursery, config=MeshConfig(), state=None, is_host=True)  # fmt: skip
        printed: list[str] = []
        host.moves.announce = printed.append
        codes_to_feed(host, feed, model)
        assert host.moves.announce is not None
        code = _code(table)
        host.moves.announce(code)
        assert printed == [] and _lines(feed)[-2:] == [(None, HOST_CODE_LINE), (None, code)]
        # an address that changes before the match: the lobby's notices, the code alone
        model.active = True
        told = len(feed.snapshot().chat)
        host.moves.announce(code)
        assert model.log[-2:] == [f"* {HOST_CODE_LINE}", code]
        assert len(feed.snapshot().chat) == told
        # without an address watch there is nothing to announce, and nothing is set
        quiet = Mesh(Identity.from_seed(b"\x06" * 32, "host"), b"agree-feed-tabl1", SECRET,
                     nursery, config=MeshConfig(), state=None, is_host=True)  # fmt: skip
        codes_to_feed(quiet, feed)
        assert quiet.moves.announce is None
        assert isinstance(out, ReachOutput)
        nursery.cancel_scope.cancel()
