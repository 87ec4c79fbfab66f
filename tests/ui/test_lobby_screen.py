"""The full-screen lobby, driven by keys through a pipe, against a real joiner on loopback.

The host's application gets its keys from a prompt_toolkit pipe and draws into a dummy 80x24
terminal; the joiner is a second `LobbyFeed` with its own identity and mesh, running in the
same trio run (its keys go through its `LobbyModel`, as its own application would send them).
Both meshes talk over 127.0.0.1 only.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

from prompt_toolkit.input import create_pipe_input

from buraco_p2p.bots.selfplay import resolve_rules
from buraco_p2p.net.channel.identity import Identity
from buraco_p2p.net.mesh.commands import SeatLost
from buraco_p2p.rules import PRESETS
from buraco_p2p.ui import TableApp
from buraco_p2p.ui.lobby_screen import lobby_rows
from buraco_p2p.ui.netplay import LobbyFeed, ResumeFeed, invite_path
from tests.ui.lobby_helpers import host_lobby, seated
from tests.ui.ui_helpers import ENTER, WAIT, SizedOutput, text_of, until


def test_host_lobby_by_keys_approves_chats_sets_rules_and_starts_the_table(
    tmp_path: Path,
) -> None:
    async def main() -> None:
        rules = resolve_rules("classic", [], 2)
        alice = Identity.from_seed(b"\x11" * 32, "Alice")
        bob = Identity.from_seed(b"\x22" * 32, "Bob")
        host = LobbyFeed(alice, tmp_path / "alice", rules=rules, preset="classic")
        async with host_lobby(host) as h:
            app, press = h.app, h.press
            code = host.model.invite
            screen = app.screen_text()
            assert "lobby · host" in screen and "Invite code" in screen
            first_line = next(line for line in screen.splitlines() if "BRC-" in line)
            assert code.startswith(first_line.strip())
            assert host.table_id is not None
            path = invite_path(tmp_path / "alice", host.table_id)
            assert path.read_text().strip() == code
            shown = "".join(line.strip().removeprefix("file ") for line in screen.splitlines())
            assert str(path) in shown
            assert "Seats 1/2" in screen and alice.public.fingerprint() in screen

            lobby = host.model.lobby
            assert lobby is not None
            lobby.answer_delay = 0.0  # the reading pause is the line lobby's own test
            joiner = h.joiner(bob, tmp_path / "bob")
            await until(lambda: lobby.request is not None, "Bob's join request")
            await until(lambda: "Join request #1" in app.screen_text(), "the prompt drawn")
            screen = app.screen_text()
            assert "Bob" in screen and bob.public.fingerprint() in screen
            assert re.search(r"expires in [12]:\d\d", screen), screen

            # Keys that are not y or n answer nothing, nor does a chat line "y": the
            # request stays on screen.
            await press("x")
            assert "answer the join request with y or n" in app.screen_text()
            await press("c", "y", ENTER, "k", "2")
            await until(lambda: any("<Alice> y" in line for line in host.model.log), "chat")
            assert lobby.request is not None and seated(host) == 1
            assert "Join request #1" in app.screen_text()

            await press("y")
            await until(lambda: seated(host) == 2, "Bob seated")
            await until(lambda: joiner.model.lobby is not None, "Bob's lobby")
            await until(lambda: "Seats 2/2" in app.screen_text(), "the seats redrawn")
            assert bob.public.fingerprint() in app.screen_text()
            assert lobby.request is None and "Join request" not in app.screen_text()

            # Chat: typed on its own line, seen by the joiner.
            await press("c", *"y and hello", ENTER)
            await until(lambda: any("<Alice> y and hello" in line
                                    for line in joiner.model.log), "the chat at Bob's")

            # The host's next preset, seen on the joiner's lobby screen.
            await press("p")
            chosen = host.model.preset
            assert chosen != "classic" and chosen in PRESETS
            await until(lambda: joiner.model.preset == chosen, "the rules at Bob's")
            # An override typed by the host: seen by Bob, and what the genesis binds.
            await press("o", *"target_score=2500", ENTER)
            await until(lambda: joiner.model.overrides == ("target_score=2500",),
                        "the override at Bob's")  # fmt: skip
            bob_screen = text_of(lobby_rows(joiner.model, 80, 24, 0.0))
            assert f"Rules {chosen} with target_score=2500" in bob_screen
            assert alice.public.fingerprint() in bob_screen  # the host's, to compare

            # Ready on both sides: the same application switches to the table.
            await press("r")
            await until(lambda: lobby.ready == {alice.public.raw}, "Alice ready")
            assert host.model.active
            h.joiner_key(joiner, "r")
            await until(lambda: not host.model.active, "the match start")
            await until(lambda: app.client.snap.view is not None, "the first deal")
            await until(lambda: "2/2 shuffles verified" in app.screen_text(), "the count")
            screen = app.screen_text()
            assert "network table" in screen and chosen in screen.splitlines()[0]
            assert "/ 2500" in screen.splitlines()[1]
            assert "lobby" not in screen and "Bob" in screen
            chat = [line.text for line in app.client.snap.chat]
            nicks = [s.nick for s in app.client.snap.seats]
            assert f"shuffle 1/2 verified ({nicks[0]})" in chat
            assert f"shuffle 2/2 verified ({nicks[1]})" in chat
            assert any("2/2 shuffles and 2/2 deals verified" in t for t in chat)
            bob_seat = nicks.index("Bob")
            assert app.client.snap.seats[bob_seat].connected
            assert app.client.snap.seats[bob_seat].link == "direct"

            hand = app.client.hand()
            await h.quit("qy")

        # Alice comes back alone: `resume` opens the table where it was, Bob shown offline.
        assert host.table_id is not None
        again = ResumeFeed(alice, tmp_path / "alice", host.table_id)
        with create_pipe_input() as keys:
            app = TableApp(again, input=keys, output=SizedOutput(80, 24))
            task = asyncio.ensure_future(app.run())
            try:
                await until(lambda: app.client.snap.view is not None, "the replayed table")
                await until(lambda: "[offline]" in app.screen_text(), "Bob shown offline")
                screen = app.screen_text()
                assert "network table (resumed)" in screen and "2/2 shuffles verified" in screen
                assert app.client.hand() == hand
                assert screen.count("[offline]") == 1
                keys.send_text("qy")
                await asyncio.wait_for(task, WAIT)
            finally:
                if not task.done():
                    app.app.exit()
                    await asyncio.wait_for(task, WAIT)

    asyncio.run(main())


def test_the_host_frees_a_seat_by_k_and_its_number(tmp_path: Path) -> None:
    async def main() -> None:
        alice = Identity.from_seed(b"\x33" * 32, "Alice")
        bob = Identity.from_seed(b"\x44" * 32, "Bob")
        host = LobbyFeed(alice, tmp_path / "a", rules=resolve_rules("us", [], 2), preset="us",
                         auto=True)  # fmt: skip
        async with host_lobby(host) as h:
            app = h.app
            joiner = LobbyFeed(bob, tmp_path / "b", code=host.model.invite)
            lost: list[SeatLost] = []

            async def join() -> None:
                try:
                    await joiner.run()
                except SeatLost as exc:  # the kicked joiner's lobby ends
                    lost.append(exc)

            app._spawn(join)
            await until(lambda: seated(host) == 2, "Bob seated (auto-approve)")
            await until(lambda: "Seats 2/2" in app.screen_text(), "the seats redrawn")
            h.keys.send_text("k")
            await until(lambda: "kick which seat?" in app.screen_text(), "the kick prompt")
            h.keys.send_text("2")
            await until(lambda: seated(host) == 1, "seat 2 freed")
            await until(lambda: "2 (empty)" in app.screen_text(), "the empty seat drawn")
            await until(lambda: any("removed by the host" in line
                                    for line in joiner.model.log), "Bob told")  # fmt: skip
            await until(lambda: bool(lost), "Bob's lobby ended")
            assert "removed you from the table (seat 2" in str(lost[0])
            await h.quit("q")

    asyncio.run(main())
