"""The full-screen application: prompt_toolkit on asyncio, the table on trio in guest mode.

prompt_toolkit owns the terminal and runs on asyncio; the table (the practice table here, a
networked session later) is trio code. Trio runs as a guest of the asyncio loop
(`trio.lowlevel.start_guest_run`, its callbacks scheduled with `loop.call_soon_threadsafe`,
`host_uses_signal_set_wakeup_fd=True` since asyncio owns the wakeup fd), so both share one
thread: trio tasks update the `Client` and ask for a redraw; key handlers on the asyncio side
hand work to trio with `TrioToken.run_sync_soon`, the one way into a trio run from outside it.
Quitting leaves the application first, then cancels the trio side and waits for it, so the
table's tasks end cleanly and prompt_toolkit restores the terminal. Ctrl-Z suspends through
prompt_toolkit, which puts the terminal back in cooked mode and takes it again after `fg`.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import outcome
import trio
from prompt_toolkit.application import Application
from prompt_toolkit.filters import Condition
from prompt_toolkit.input import Input
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.keys import Keys
from prompt_toolkit.layout import Layout, Window
from prompt_toolkit.layout.controls import FormattedTextControl
from prompt_toolkit.mouse_events import MouseEvent, MouseEventType
from prompt_toolkit.output import Output

from buraco_p2p.engine import Move
from buraco_p2p.net.reach.rejoin import looks_like_rejoin
from buraco_p2p.play.store import default_data_dir
from buraco_p2p.text.glyphs import ASCII_SYMBOLS, Glyphs
from buraco_p2p.ui import canvas as cv
from buraco_p2p.ui.canvas import Clicker
from buraco_p2p.ui.client import Client, Panel
from buraco_p2p.ui.feed import MoveRefused, SaveUnavailable, TableFeed
from buraco_p2p.ui.keys import Outcome, press
from buraco_p2p.ui.lobby_model import LobbyModel
from buraco_p2p.ui.lobby_screen import lobby_rows
from buraco_p2p.ui.panels import (
    chat_panel,
    hand_end_panel,
    help_panel,
    history_panel,
    pile_panel,
    progress_rows,
    rules_panel,
    too_small,
)
from buraco_p2p.ui.seating import min_size
from buraco_p2p.ui.table_screen import Screen
from buraco_p2p.ui.theme import style

# Keys bound by name; every other key arrives as the character typed.
NAMED_KEYS = (
    "left", "right", "up", "down", "pageup", "pagedown", "home", "end", "tab", "s-tab",
    "enter", "escape", "backspace", "c-c", "c-z", "c-h", "f1",
)

PANELS = {
    Panel.HELP: help_panel,
    Panel.RULES: rules_panel,
    Panel.PILE: pile_panel,
    Panel.HISTORY: history_panel,
    Panel.HAND_END: hand_end_panel,
    Panel.CHAT: chat_panel,
}


def render(
    client: Client, cols: int, rows: int, now: float, click: Clicker | None = None
) -> list[cv.Row]:
    """The whole screen for a client at a size: the table, a panel, or the size message."""
    out = _screen(client, cols, rows, now, click)
    if client.glyphs.ascii:
        out = [[(f[0], f[1].translate(ASCII_SYMBOLS), *f[2:]) for f in row] for row in out]
    return out


def _screen(
    client: Client, cols: int, rows: int, now: float, click: Clicker | None
) -> list[cv.Row]:
    need = min_size(len(client.snap.seats))
    if cols < need[0] or rows < need[1]:
        return too_small(cols, rows, need)
    screen = Screen(client, cols, rows, now, click)
    panel = client.current_panel()
    if panel is not Panel.NONE:
        return PANELS[panel](screen)
    out = screen.table()
    prog = progress_rows(screen)
    if prog:
        mid = max(3, rows // 2 - 1)
        out[mid : mid + len(prog)] = prog
    return out


class TableApp:
    """The client application for one table feed."""

    def __init__(
        self,
        feed: TableFeed,
        *,
        ascii: bool = False,
        colour: bool = True,
        input: Input | None = None,
        output: Output | None = None,
        clock: Callable[[], float] = time.monotonic,
        log_dir: Path | None = None,
        lobby: LobbyModel | None = None,
    ) -> None:
        self.feed = feed
        self.lobby = lobby
        self.ascii = ascii
        self.clock = clock
        # Saved logs go with the tables, not wherever the program happened to be started.
        self.log_dir = log_dir or default_data_dir() / "logs"
        first = feed.snapshot()
        glyphs = Glyphs(ascii=ascii, deck_size=first.rules.deck_size)
        self.client = Client(first, self._send, glyphs)
        self._token: trio.lowlevel.TrioToken | None = None
        self._nursery: trio.Nursery | None = None
        self._waiting: list[Callable[[], Awaitable[object]]] = []
        self.failure: BaseException | None = None
        self.keys_seen = 0  # key presses handled, for tests that type and wait
        control = FormattedTextControl(self._fragments, focusable=True, show_cursor=False)
        self.app: Application[None] = Application(
            layout=Layout(Window(control)),
            key_bindings=self._bindings(),
            full_screen=True,
            # Off in the lobby: a plain drag then selects the invite code in the terminal.
            mouse_support=Condition(lambda: not self.in_lobby()),
            style=style(colour),
            refresh_interval=1.0,
            # Draw as soon as asked: waiting for an idle loop would spin while trio's guest
            # callbacks keep it busy, and delay every key's effect by up to the wait.
            max_render_postpone_time=None,
            input=input,
            output=output,
        )
        # Escape alone must answer at once, not after the wait for a longer sequence.
        self.app.ttimeoutlen = 0.05
        if lobby is not None:
            lobby.on_change = self.app.invalidate

    def in_lobby(self) -> bool:
        """Whether the lobby is on screen (until the match starts, in the same application)."""
        return self.lobby is not None and self.lobby.active

    # ------------------------------------------------------------------ drawing

    def _fragments(self) -> list[Any]:
        size = self.app.output.get_size()
        return cv.join(self._rows(size.columns, size.rows, self._click))

    def _rows(self, cols: int, rows: int, click: Clicker | None) -> list[cv.Row]:
        if self.lobby is not None and self.lobby.active:
            return lobby_rows(self.lobby, cols, rows, self.clock())
        return render(self.client, cols, rows, self.clock(), click)

    def screen_text(self) -> str:
        """The screen as the window draws it now, as plain text (for tests and logs)."""
        size = self.app.output.get_size()
        rows = self._rows(size.columns, size.rows, None)
        return "\n".join("".join(f[1] for f in row) for row in rows)

    def _click(self, target: str, index: int) -> Callable[[MouseEvent], object]:
        """A click on a hand card selects it; on one of the side's melds, adds the selection."""

        def handler(event: MouseEvent) -> object:
            if event.event_type is not MouseEventType.MOUSE_UP:
                return NotImplemented
            if target == "card":
                self.client.toggle(index)
            elif self.client.selected:
                self.client.add(index)
            self.app.invalidate()
            return None

        return handler

    # ------------------------------------------------------------------ keys

    def _bindings(self) -> KeyBindings:
        kb = KeyBindings()
        for name in NAMED_KEYS:
            kb.add(name, eager=True)(self._named(name))

        @kb.add(Keys.Any)
        def _typed(event: KeyPressEvent) -> None:
            self.key(event.data)

        @kb.add(Keys.BracketedPaste)
        def _pasted(event: KeyPressEvent) -> None:
            self.paste(event.data)

        return kb

    def _named(self, name: str) -> Callable[[KeyPressEvent], None]:
        def handler(event: KeyPressEvent) -> None:
            self.key(name)

        return handler

    def paste(self, text: str) -> None:
        """Text pasted into the terminal: the lobby takes it whole (a reply code, a chat
        line); the table takes a re-join code whole (`feed.say` dials it, never sends it as
        chat), other text as typed keys, as before."""
        if not self.in_lobby():
            if looks_like_rejoin(text):
                code = text.strip()
                self._spawn(lambda: self.feed.say(code))
                self.app.invalidate()
            else:
                self.key(text)
            return
        assert self.lobby is not None
        intent = self.lobby.paste(text)
        if callable(intent):
            self._spawn(intent)
        self.app.invalidate()

    def key(self, key: str) -> None:
        """One key press, as the bindings deliver it (also the tests' and benchmark's way in)."""
        if self.lobby is not None and self.lobby.active:
            self.keys_seen += 1
            if key == "c-z":
                self.app.suspend_to_background()
                return
            intent = self.lobby.key(key)
            if intent == "quit":
                self.app.exit()
            elif callable(intent):
                self._spawn(intent)
            self.app.invalidate()
            return
        result = press(self.client, key)
        self.keys_seen += 1
        if result is Outcome.QUIT:
            self.app.exit()
        elif result is Outcome.SUSPEND:
            self.app.suspend_to_background()
        elif result is Outcome.READY:
            self._spawn(self.feed.ready)
        elif result is Outcome.CHAT:
            text = self.client.chat_sent
            self._spawn(lambda: self.feed.say(text))
        elif result is Outcome.SAVE:
            self._spawn(self._save)
        elif result is Outcome.AGREE:
            action, self.client.agree_action = self.client.agree_action, ""
            self._spawn(lambda: self._agree(action))
        elif result is Outcome.SKIP:
            self._spawn(self.feed.skip)
        self.app.invalidate()

    # ------------------------------------------------------------------ trio side

    def _spawn(self, fn: Callable[[], Awaitable[object]]) -> None:
        """Start `fn` as a task of the trio run (queued until the run has started)."""
        token, nursery = self._token, self._nursery
        if token is None or nursery is None:
            self._waiting.append(fn)
            return
        with contextlib.suppress(trio.RunFinishedError):
            token.run_sync_soon(nursery.start_soon, fn)

    def _send(self, move: Move) -> None:
        self._spawn(lambda: self._submit(move))

    async def _submit(self, move: Move) -> None:
        error: str | None = None
        try:
            await self.feed.submit(move)
        except MoveRefused as e:
            error = e.reason
        self.client.sent(error)
        self.app.invalidate()

    async def _agree(self, action: str) -> None:
        self.client.say(await self.feed.agree(action))
        self.app.invalidate()

    async def _save(self) -> None:
        stamp = time.strftime("%Y%m%d-%H%M%S")
        path = self.log_dir / f"buraco-match-{stamp}.log"
        try:
            self.log_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
            command = await self.feed.save_log(path)
            self.client.saved = ["The match log is saved in", str(path), "Audit it with:", command]
        except (SaveUnavailable, OSError) as e:
            self.client.saved = [f"Not saved: {e}"]
        self.app.invalidate()

    async def _follow(self) -> None:
        """Every new snapshot of the table into the client, and a redraw."""
        version = self.client.snap.version
        while True:
            snap = await self.feed.next_snapshot(version)
            version = snap.version
            if snap.rules.deck_size != self.client.snap.rules.deck_size:
                # A joiner learns the table's rules from the genesis, after the lobby.
                self.client.glyphs = Glyphs(ascii=self.ascii, deck_size=snap.rules.deck_size)
            self.client.update(snap)
            self.app.invalidate()

    async def _trio_main(self) -> None:
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            self._token = trio.lowlevel.current_trio_token()
            for fn in self._waiting:
                nursery.start_soon(fn)
            self._waiting.clear()
            nursery.start_soon(self._follow)
            await self.feed.run()
            nursery.cancel_scope.cancel()

    def _stop_trio(self) -> None:
        token, nursery = self._token, self._nursery
        if token is None or nursery is None:
            return
        with contextlib.suppress(trio.RunFinishedError):
            token.run_sync_soon(nursery.cancel_scope.cancel)

    # ------------------------------------------------------------------ running

    async def run(self, ready: Callable[[], None] | None = None) -> None:
        """Run until the player quits; call `ready()` once both loops are going.

        A failure of the table's side ends the application and is raised here, after the
        terminal has been restored.
        """
        loop = asyncio.get_running_loop()
        done: asyncio.Future[outcome.Outcome[None]] = loop.create_future()

        def finished(result: outcome.Outcome[None]) -> None:
            if not done.done():
                done.set_result(result)
            if isinstance(result, outcome.Error):
                self.failure = result.error
            future = self.app.future
            if self.app.is_running and future is not None and not future.done():
                self.app.exit()

        trio.lowlevel.start_guest_run(
            self._trio_main,
            run_sync_soon_threadsafe=loop.call_soon_threadsafe,
            done_callback=finished,
            host_uses_signal_set_wakeup_fd=True,
        )
        try:
            await self.app.run_async(pre_run=ready)
        finally:
            self._stop_trio()
            result = await done
        if isinstance(result, outcome.Error) and not isinstance(result.error, trio.Cancelled):
            result.unwrap()


def run_client(feed: TableFeed, *, ascii: bool = False, colour: bool = True) -> None:
    """Run the full-screen client for `feed` in this terminal until the player quits.

    The feed's `run()` is started in trio, as a guest of the client's asyncio loop: a
    networked table does all its trio work (links, session, timers) inside it.
    """
    app = TableApp(feed, ascii=ascii, colour=colour)
    asyncio.run(app.run())
    for line in app.client.saved or ():  # a saved log's path and command, copied whole
        print(line, flush=True)
