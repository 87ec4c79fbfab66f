"""`buraco-p2p replay` full screen: a match log stepped through with keys (prompt_toolkit).

The log is audited by `verify` in a child process (`replay.checking`) while the screen is up;
each time more of it is found good, the new entries are walked (a few hundred at a time, so a
key is never kept waiting) and the hands they complete join the row of frames. Until the first
hand is in, the screen says how far the check has got. Keys move a frame, a turn or a hand,
switch the point of view, and open the panels (`ReplayScreen`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

from prompt_toolkit.application import Application
from prompt_toolkit.input import Input
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.keys import Keys
from prompt_toolkit.layout import Layout, Window
from prompt_toolkit.layout.controls import FormattedTextControl
from prompt_toolkit.output import Output
from prompt_toolkit.styles import Style, merge_styles

from buraco_p2p.replay.checking import Checker
from buraco_p2p.replay.command import Opened
from buraco_p2p.replay.timeline import FACE_UP, Kind, Timeline
from buraco_p2p.text.glyphs import ASCII_SYMBOLS, Glyphs
from buraco_p2p.ui import canvas as cv
from buraco_p2p.ui import replay_panels as panels
from buraco_p2p.ui.client import Client
from buraco_p2p.ui.panels import rules_panel, too_small
from buraco_p2p.ui.replay_screen import Frame, ReplayScreen, client_for, snapshot
from buraco_p2p.ui.seating import min_size
from buraco_p2p.ui.theme import no_color, style

__all__ = ["ReplayApp", "show"]

WALK_SLICE = 150  # entries walked between two looks at the keys (a few milliseconds)
NAMED_KEYS = ("left", "right", "up", "down", "pageup", "pagedown", "home", "end", "enter",
              "escape", "backspace", "c-c", "c-z")  # fmt: skip
BARS = Style.from_dict({"bar": "fg:ansicyan", "bar2": "fg:ansiyellow"})


class ReplayApp:
    """The replay's application: a timeline, where it stands in it, and what covers it."""

    def __init__(
        self,
        tl: Timeline,
        name: str,
        *,
        checker: Checker | None = None,
        seat: int = FACE_UP,
        party: int | None = None,
        deal: int = 0,
        ascii: bool = False,
        colour: bool = True,
        input: Input | None = None,
        output: Output | None = None,
    ) -> None:
        self.tl = tl
        self.name = name
        self.checker = checker
        self.seat = seat
        self.party = party  # a player named by nickname: their seat once the seats are in
        self.index = 0
        self.wanted: int | None = deal  # a deal to show once it is in (`--hand`)
        self.to_end = False  # End was pressed before the end was in: go there when it is
        self.panel = ""  # help, rules, story, deal, feed ("": the table)
        self.scroll = 0
        self.glyphs = Glyphs(ascii=ascii, deck_size=tl.walker.rules.deck_size)
        self.client: Client | None = None
        self.keys_seen = 0
        control = FormattedTextControl(self._fragments, focusable=True, show_cursor=False)
        self.app: Application[None] = Application(
            layout=Layout(Window(control)),
            key_bindings=self._bindings(),
            full_screen=True,
            style=merge_styles([style(colour), BARS if colour else Style([])]),
            max_render_postpone_time=None,
            input=input,
            output=output,
        )
        self.app.ttimeoutlen = 0.05
        self._place()

    # ------------------------------------------------------------------ drawing

    def frame(self) -> Frame:
        return Frame(self.tl, self.index, self.seat, self.name, self.checking())

    def checking(self) -> str:
        """How far `verify` has got, while it works."""
        c = self.checker
        if c is not None and c.failed:
            return c.failed
        total = len(self.tl.walker.wires)
        return f"checking {min(self.tl.settled, total)}/{total}"

    def rows(self, cols: int, rows: int) -> list[cv.Row]:
        """The whole screen at a size."""
        out = self._rows(cols, rows)
        if self.glyphs.ascii:
            out = [[(f[0], f[1].translate(ASCII_SYMBOLS), *f[2:]) for f in row] for row in out]
        return out

    def _rows(self, cols: int, rows: int) -> list[cv.Row]:
        need = min_size(self.tl.players)
        if cols < need[0] or rows < need[1]:
            return too_small(cols, rows, need)
        if not self.tl.frames:
            return self._waiting(cols, rows)
        f = self.frame()
        self.client = client = client_for(f, self.glyphs, self.client)
        screen = ReplayScreen(f, client, cols, rows)
        kind = self.tl.frames[self.index].kind
        if self.panel == "help":
            return panels.help_panel(screen)
        if self.panel == "rules":
            client.panel_page = self.scroll
            return rules_panel(screen)
        if self.panel == "deal":
            return panels.deal(screen)
        if self.panel == "feed":
            client.snap = snapshot(f, feed_lines=None)
            return panels.feed(screen, self.scroll)
        if self.panel == "story" or kind is Kind.END:
            return panels.story(screen, self.scroll)
        if kind is Kind.OVER:
            return panels.hand_over(screen)
        return screen.table()

    def _waiting(self, cols: int, rows: int) -> list[cv.Row]:
        lines = [f"replay · {self.name}", self.checking(),
                 "each hand is shown once verify has checked it"]  # fmt: skip
        c = self.checker
        if self.tl.verdict is not None:
            lines[1] = self.tl.verdict_line()
        elif c is not None and c.failed:
            lines[1] = c.failed
        out: list[cv.Row] = [[] for _ in range(rows)]
        top = max(0, rows // 2 - 2)
        for i, line in enumerate(lines):
            out[top + i] = cv.center([("class:label" if i == 0 else "", line)], cols)
        out[-1] = cv.fit([("class:keys", " q quit")], cols, "class:keys")
        return [cv.fit(r, cols) for r in out]

    def _fragments(self) -> list[Any]:
        size = self.app.output.get_size()
        return cv.join(self.rows(size.columns, size.rows))

    def screen_text(self, cols: int = 80, rows: int = 24) -> str:
        """The screen as plain text (tests, benchmarks)."""
        return "\n".join("".join(f[1] for f in row) for row in self.rows(cols, rows))

    # ------------------------------------------------------------------ keys

    def _bindings(self) -> KeyBindings:
        kb = KeyBindings()
        for key in NAMED_KEYS:
            kb.add(key, eager=True)(self._named(key))

        @kb.add(Keys.Any)
        def _typed(event: KeyPressEvent) -> None:
            self.key(event.data)

        return kb

    def _named(self, name: str) -> Callable[[KeyPressEvent], None]:
        def handler(event: KeyPressEvent) -> None:
            self.key(name)

        return handler

    def key(self, key: str) -> None:
        """One key press (also the tests' and the benchmark's way in)."""
        self.keys_seen += 1
        if key in ("q", "c-c"):
            self.app.exit()
            return
        if key == "c-z":
            self.app.suspend_to_background()
            return
        self.act(key)
        self.app.invalidate()

    def act(self, key: str) -> None:
        """What a key does to the replay (no drawing)."""
        tl = self.tl
        if key in ("up", "down") and self.panel in ("story", "feed", "") and (
            self.panel or self._on(Kind.END)
        ):
            self.scroll = max(0, self.scroll + (1 if key == "up" else -1))
            return
        panels = {"?": "help", "r": "rules", "s": "story", "d": "deal", "C": "feed"}
        if key == "r" and self.panel == "rules":
            self.scroll += 1  # the next page of the rules
            return
        if key in panels:
            self.panel = "" if self.panel == panels[key] else panels[key]
            self.scroll = 0
            return
        if key == "escape":
            self.panel = ""
            return
        if key == "v":
            self.seat = FACE_UP if self.seat == tl.players - 1 else self.seat + 1
            return
        if key == "f":
            self.seat = FACE_UP
            return
        if len(key) == 1 and key.isdigit() and int(key) < tl.players:
            self.seat = int(key)
            return
        if not tl.frames:
            self.to_end = self.to_end or key == "end"  # once the end is in
            return
        last = len(tl.frames) - 1
        moves: dict[str, Callable[[int], int]] = {
            "right": lambda i: min(last, i + 1),
            " ": lambda i: min(last, i + 1),
            "enter": lambda i: min(last, i + 1),
            "left": lambda i: max(0, i - 1),
            "backspace": lambda i: max(0, i - 1),
            "t": tl.next_turn,
            "T": tl.prev_turn,
            "pagedown": tl.next_hand,
            "pageup": tl.prev_hand,
            "home": lambda i: 0,
            "end": lambda i: last,
        }
        if key in moves:
            self.index = moves[key](self.index)
            self.panel = "" if self.panel in ("story", "feed", "help", "rules") else self.panel
            self.scroll = 0
            self.wanted = None
            self.to_end = key == "end" and not tl.done

    def _on(self, kind: Kind) -> bool:
        return bool(self.tl.frames) and self.tl.frames[self.index].kind is kind

    def _place(self) -> None:
        """Go where asked once it is in: the deal `--hand` named, or the end."""
        tl = self.tl
        if self.party is not None and tl.walker.seating:
            self.seat, self.party = tl.walker.seat_of(self.party), None
        if self.wanted is not None:
            at = tl.first_of(self.wanted)
            if at is not None:
                self.index, self.wanted = at, None
            elif tl.done and tl.frames:
                self.wanted = None  # no such deal in this log: stay at the first
        if self.to_end and tl.frames:
            self.index = len(tl.frames) - 1
            self.to_end = not tl.done

    # ------------------------------------------------------------------ reading the log

    def pump(self) -> bool:
        """Take `verify`'s news and walk what it settled, a slice at a time; whether there is
        more to do now."""
        tl, c = self.tl, self.checker
        if c is not None:
            c.poll()
            tl.settle(c.good)
        more = tl.advance(WALK_SLICE)
        if not more and c is not None and c.verdict is not None and not tl.done:
            tl.settle(c.good)
            if not tl.advance(WALK_SLICE):
                tl.conclude(*c.verdict)
        self._place()
        return more

    async def _read(self) -> None:
        """Walk the log as `verify` settles it, until the end is in."""
        loop = asyncio.get_running_loop()
        news = asyncio.Event()
        c = self.checker
        if c is not None:
            loop.add_reader(c.fileno(), news.set)
        try:
            while not self.tl.done:
                before = len(self.tl.frames)
                more = self.pump()
                if len(self.tl.frames) != before or self.tl.done:
                    self.app.invalidate()
                if more:
                    await asyncio.sleep(0)
                    continue
                if c is None or c.failed:
                    return
                news.clear()
                if not c.poll():
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(news.wait(), 0.5)
        finally:
            if c is not None:
                with contextlib.suppress(Exception):
                    loop.remove_reader(c.fileno())

    async def run(self) -> None:
        reader = asyncio.ensure_future(self._read())
        try:
            await self.app.run_async()
        finally:
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reader


def show(opened: Opened) -> int:
    """`replay` on a terminal: the audit started in its child process (before the screen,
    while this process has one thread), then the replay until the viewer quits."""
    checker = Checker(opened.data, opened.path, opened.jobs)
    try:
        app = ReplayApp(
            opened.timeline, opened.name, checker=checker, seat=opened.seat,
            party=opened.party, deal=opened.deal, ascii=opened.ascii, colour=not no_color(),
        )  # fmt: skip
        asyncio.run(app.run())
    finally:
        checker.stop()
    return 0
