"""Seats played by bots are marked "bot", on the lobby screen and on the table.

A full-screen host (`LobbyFeed` with `bots=N`, keys from a pipe, an 80x24 dummy terminal)
starts N real `bot-peer` processes on 127.0.0.1, as `host --bots N` does; it made their
identities, so it knows which seats they take, and tells the table. At four seats a person
(Bob, a second `LobbyFeed` in the same trio run) takes the remaining seat and must not be
marked; Bob marks the bots' seats as the host does, in his lobby and at his table, from the
host's `bots` message. A resumed host marks them again from the table directory. The
`play` tables (bot peer processes, or the practice table) mark every seat but the player's.
"""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path

import pytest
from prompt_toolkit.input import create_pipe_input

from buraco_p2p.bots.selfplay import resolve_rules
from buraco_p2p.crypto import DeterministicRandomSource
from buraco_p2p.net.channel.identity import Identity
from buraco_p2p.play.botmarks import load_bot_keys
from buraco_p2p.play.driver import bot_parties
from buraco_p2p.rules import get_preset
from buraco_p2p.session import Peer, Router, make_genesis
from buraco_p2p.ui import TableApp
from buraco_p2p.ui.lobby_screen import lobby_rows
from buraco_p2p.ui.netplay import LobbyFeed, ResumeFeed
from tests.ui.lobby_helpers import host_lobby
from tests.ui.ui_helpers import WAIT, SizedOutput, running, text_of, until

NET_WAIT = 90.0  # bot peer processes start and shuffle with every proof on a shared machine


def _seat_lines(screen: str) -> list[str]:
    """The lobby's seat rows ("  N nickname (tags)  ...")."""
    return [line for line in screen.splitlines() if line[:3].strip().isdigit()]


def _marked(row: str) -> bool:
    """Whether a seat row carries the "bot" tag (a bot's nickname may say "bot" too)."""
    return "bot)" in row or "bot," in row


@pytest.mark.parametrize("players", [2, 4])
def test_the_host_marks_the_bots_it_started_in_the_lobby_and_at_the_table(
    tmp_path: Path, players: int
) -> None:
    bots = players - 1 if players == 2 else players - 2
    rules = resolve_rules("classic", [], players)

    async def main() -> None:
        alice = Identity.from_seed(b"\x77" * 32, "Alice")
        host = LobbyFeed(alice, tmp_path / "alice", rules=rules, preset="classic", bots=bots,
                         auto=True, listen="127.0.0.1")  # fmt: skip
        async with host_lobby(host) as h:
            app = h.app
            bob = Identity.from_seed(b"\x88" * 32, "Bob")
            joiner = h.joiner(bob, tmp_path / "bob") if players > bots + 1 else None
            await until(lambda: f"Seats {players}/{players}" in app.screen_text(),
                        "every seat taken", NET_WAIT)  # fmt: skip

            rows = _seat_lines(text_of(lobby_rows(host.model, 80, 24, 0.0)))
            assert len(rows) == players, rows
            marked = [r for r in rows if _marked(r)]
            assert len(marked) == bots, rows
            assert not any("Alice" in r for r in marked)
            assert not any("Bob" in r for r in marked)
            assert len(host.model.bots) == bots

            if joiner is not None:
                # Bob marks the same seats, from the host's `bots` message alone.
                await until(lambda: joiner.model.bots == host.model.bots, "the marks at Bob's",
                            NET_WAIT)  # fmt: skip
                bob_rows = _seat_lines(text_of(lobby_rows(joiner.model, 80, 24, 0.0)))
                assert [_marked(r) for r in bob_rows] == [_marked(r) for r in rows], bob_rows

            h.keys.send_text("r")
            if joiner is not None:
                await until(lambda: joiner.model.lobby is not None, "Bob's lobby")
                h.joiner_key(joiner, "r")
            await until(lambda: not host.model.active, "the match start", NET_WAIT)
            await until(lambda: app.client.snap.view is not None, "the first deal", NET_WAIT)
            seats = app.client.snap.seats
            me = app.client.snap.me
            flagged = {s.nick for s in seats if s.is_bot}
            assert len(flagged) == bots and all(n.startswith("bot") for n in flagged)
            assert not seats[me].is_bot
            assert "Bob" not in flagged and "Alice" not in flagged
            screen = app.screen_text()
            assert screen.count("opponent bot") + screen.count("partner bot") == bots
            if joiner is not None:
                # ... and at the table: the seats Bob's table screen marks "bot".
                await until(lambda: joiner.driver is not None, "Bob's table", NET_WAIT)
                bob_seats = joiner.snapshot().seats
                assert [s.is_bot for s in bob_seats] == [s.is_bot for s in seats]
            table_id = host.table_id
            await h.quit("qy")

        # Alice resumes: the bots saved with the table are marked again.
        assert table_id is not None
        root = tmp_path / "alice"
        saved = load_bot_keys(root, table_id)
        assert saved == host.model.bots
        again = ResumeFeed(alice, root, table_id, bot_keys=saved)
        with create_pipe_input() as keys:
            app = TableApp(again, input=keys, output=SizedOutput(80, 24))
            task = asyncio.ensure_future(app.run())
            try:
                await until(lambda: app.client.snap.view is not None, "the replayed table")
                assert {s.nick for s in app.client.snap.seats if s.is_bot} == flagged
                keys.send_text("qy")
                await asyncio.wait_for(task, WAIT)
            finally:
                if not task.done():
                    app.app.exit()
                    await asyncio.wait_for(task, WAIT)

    asyncio.run(main())


@pytest.mark.parametrize("players", [2, 4])
def test_the_practice_table_marks_every_seat_but_the_players(players: int) -> None:
    async def main() -> None:
        async with running(resolve_rules("classic", [], players), 5) as r:
            await until(lambda: r.app.client.snap.view is not None, "the first deal")
            seats = r.app.client.snap.seats
            assert [s.is_bot for s in seats] == [s.seat != r.feed.me for s in seats]
            screen = r.screen()
            assert screen.count("opponent bot") + screen.count("partner bot") == players - 1

    asyncio.run(main())


def test_a_bot_heir_is_marked_by_every_party_from_the_replace_on() -> None:
    """A `replace` seats an heir, which only a bot is: every party marks that seat, from the
    signed log alone (no hint from anyone), and none before."""
    from tests.session.session_helpers import bot_chooser, identities, run_until

    gone = 2
    rules = dataclasses.replace(get_preset("us"), target_score=300)
    g = make_genesis(b"bot-marks-table1", identities(), rules, timeout_ms=1000)
    r = Router([Peer(g, i, DeterministicRandomSource(bytes([41, n]) * 16))
                for n, i in enumerate(identities())], bot_chooser(41), relay=True)  # fmt: skip
    r.start()
    run_until(r, lambda: len(r.peers[0].log) > 40)
    r.silent = {gone}
    r.run()
    r.advance(2.0)  # past the table's timeout: the others may replace the silent party
    present = [p for p in range(4) if p != gone]
    assert all(bot_parties(r.peers[p]) == frozenset() for p in present)
    assert bot_parties(r.peers[0], frozenset({r.peers[1].table.keys[1].raw})) == {1}

    heir_id = Identity.from_seed(b"\x99" * 32, "heir")
    log = r.peers[0].log
    heir = Peer(log[0], heir_id, DeterministicRandomSource(b"\x55" * 32), r.now, heir=True)
    for e in log[1:]:
        heir.receive(e.wire, r.now)
    r.peers[gone] = heir
    r.silent = set()
    new = (heir_id.public.raw,)
    r.act(present[0], r.peers[present[0]].propose_void("replace", r.now, (gone,), new))
    r.run()
    for p in present[1:]:
        r.act(p, r.peers[p].join_void(r.now))
    r.run()
    assert heir.party == gone
    for p in present:
        assert bot_parties(r.peers[p]) == {gone}, p
    assert gone not in bot_parties(heir)  # its own seat is not another's


def test_the_saved_marks_are_read_back_and_a_damaged_file_is_refused(tmp_path: Path) -> None:
    """The table's `bots` file: what was saved comes back; no file, no marks; anything but an
    array of distinct identity keys is a damaged table (`StoreError` naming the file)."""
    from buraco_p2p import codec
    from buraco_p2p.play.botmarks import save_bot_keys
    from buraco_p2p.play.store import StoreError

    table = b"\x42" * 16
    path = tmp_path / "tables" / table.hex() / "bots"
    path.parent.mkdir(parents=True)
    assert load_bot_keys(tmp_path, table) == frozenset()
    keys = frozenset(Identity.from_seed(bytes([n]) * 32, "bot").public.raw for n in (1, 2))
    save_bot_keys(tmp_path, table, keys)
    assert load_bot_keys(tmp_path, table) == keys
    assert path.stat().st_mode & 0o777 == 0o600
    one = sorted(keys)[0]
    for damaged in (
        b"\xc1",
        codec.pack({"keys": []}),
        codec.pack([one, one]),
        codec.pack([one[:31]]),
        codec.pack([bytes(32)]),
        codec.pack(["bot"]),
        codec.pack([Identity.from_seed(bytes([n]) * 32, "b").public.raw for n in range(3, 9)]),
    ):
        path.write_bytes(damaged)
        with pytest.raises(StoreError, match="bots"):
            load_bot_keys(tmp_path, table)


@pytest.mark.parametrize("client", ["_resume_line", "_resume_screen"])
def test_a_damaged_marks_file_stops_resume_in_one_line(
    client: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before any identity or node is opened: exit code 4 and one line naming the file."""
    import argparse

    from buraco_p2p.play import hostjoin
    from buraco_p2p.play.store import TableMeta, TableStore

    table = bytes(range(16))
    store = TableStore.for_table(table, tmp_path)
    store.create(TableMeta(b"invite", True, 0, 0), None)
    (store.path / "bots").write_bytes(b"\xc1 not msgpack")
    # a config directory of the test's own: the user's would be shared with every other
    # client (and test run) on this machine, and its self lock with them
    args = argparse.Namespace(table=table.hex(), data_dir=str(tmp_path),
                              config_dir=str(tmp_path / "config"), ascii=True)  # fmt: skip
    assert getattr(hostjoin, client)(args) == 4
    err = capsys.readouterr().err
    assert err.startswith(f"buraco-p2p resume: error: table {table.hex()} in {tmp_path}: ")
    assert "bots: not msgpack" in err and err.count("\n") == 1, err
