"""The table, drawn as rows of exactly the terminal's width.

From the top: the title (or a cheating complaint, loudly), the scores, the fairness status and
whose turn it is with a timer; the seats across the top; the seats on the left and right with
every side's melds between them; the stock, pots and pile; what the others just did; the own
hand sorted and grouped, with the cursor and the selection marked under it; the message line;
chat; and the keys that work now. `Screen.table()` builds it; the panels (help, rules, pile,
history, the end of a hand) are in `buraco_p2p.ui.panels`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from buraco_p2p.engine import Phase, TableMeld
from buraco_p2p.rules import MeldKind
from buraco_p2p.ui import canvas as cv
from buraco_p2p.ui.canvas import Row
from buraco_p2p.ui.client import Client
from buraco_p2p.ui.glyphs import group_of
from buraco_p2p.ui.seating import places
from buraco_p2p.ui.words import describe

SIDE_COL = 15
CARD_CELL = 3  # two columns of card, one of space

# Mouse handlers by target: ("card", index in the hand) or ("meld", index of an own meld).
Clicker = Callable[[str, int], Callable[[Any], object]]


def group_name(client: Client, seats: tuple[int, ...], groups: int) -> str:
    """A side or match side by its players: `You` or the nickname for one player; `Us` for
    this seat's team, `Them` for the other of two, else the players' names."""
    snap = client.snap
    if len(seats) == 1:
        return "You" if seats[0] == snap.me else snap.seats[seats[0]].nick
    if snap.me in seats:
        return "Us"
    if groups == 2:
        return "Them"
    return "+".join(snap.seats[s].nick for s in seats)


def side_name(client: Client, side: int) -> str:
    """A side of the hand in play, by its players (see `group_name`)."""
    snap = client.snap
    return group_name(client, snap.side_seats(side), len(snap.sides))


def match_side_name(client: Client, match_side: int) -> str:
    snap = client.snap
    return group_name(client, snap.match_side_seats(match_side), len(snap.scores))


def clock_text(seconds: float) -> str:
    s = max(0, int(seconds))
    return f"{s // 60}:{s % 60:02d}"


class Screen:
    """Builds the rows of the table for one client at one size and moment."""

    def __init__(
        self, client: Client, cols: int, rows: int, now: float, click: Clicker | None = None
    ) -> None:
        self.c = client
        self.g = client.glyphs
        self.cols = cols
        self.rows = rows
        self.now = now
        self.click = click

    # ------------------------------------------------------------------ top

    def title(self) -> Row:
        snap = self.c.snap
        complaints = snap.fairness.complaints
        if complaints:
            k = complaints[-1]
            more = f" (+{len(complaints) - 1} more)" if len(complaints) > 1 else ""
            msg = f" {self.g.warn_mark} CHEATING COMPLAINT against {k.nick} (seat {k.seat}): "
            loud = "class:complaint"
            return cv.fit([(loud, msg + k.reason + more)], self.cols, loud)
        view = snap.view
        hand = f" · hand {view.setup.hand_number + 1}" if view is not None else ""
        left = f" buraco-p2p · {snap.title} · {snap.rules.name}{hand}"
        seed = snap.extra.get("seed")
        right = f"seed {seed} " if seed else ""
        bar = "class:title"
        return cv.spread([(bar, left)], [(bar, right)], self.cols, bar)

    def status(self) -> Row:
        snap = self.c.snap
        parts: Row = [("", " ")]
        target = snap.rules.target_score
        for i, score in enumerate(snap.scores):
            if i:
                parts.append(("", "  "))
            parts.append(("class:label", f"{match_side_name(self.c, i)} "))
            parts.append(("class:score", str(score)))
        parts.append(("class:dim", f" / {target}"))
        fair = snap.fairness
        if not fair.checked:
            ftext: Row = [("class:dim", "practice: no cryptography")]
        else:
            n = len(fair.complaints)
            style = "class:complaint" if n else "class:good"
            ftext = [
                (
                    style,
                    f"{fair.shuffles_verified}/{fair.shuffles_total} shuffles verified, "
                    f"{n} complaint{'s' if n != 1 else ''}",
                )
            ]
        turn = self.turn_text()
        right: Row = [*turn, ("", "  "), *ftext, ("", " ")]
        return cv.spread(parts, right, self.cols)

    def turn_text(self) -> Row:
        snap = self.c.snap
        view = snap.view
        if snap.match_over:
            return [("class:label", "match over")]
        if view is None or snap.hand_over or view.ended:
            return [("class:dim", "between hands")]
        t = clock_text(self.now - snap.turn_since)
        if view.turn == snap.me:
            return [("class:myturn", f"{self.g.turn_mark} your turn {t}")]
        return [("class:label", f"{snap.seats[view.turn].nick}'s turn {t}")]

    # ------------------------------------------------------------------ seats

    def seat_lines(self, seat: int) -> list[Row]:
        snap = self.c.snap
        view = snap.view
        info = snap.seats[seat]
        turn = view is not None and not view.ended and view.turn == seat
        mark = self.g.turn_mark + " " if turn else "  "
        style = "class:myturn" if turn else "class:name"
        partner = snap.side_of(seat) == snap.side_of(snap.me)
        lines: list[Row] = [[(style, mark + info.nick)]]
        tag = "partner" if partner else "opponent"
        if info.is_bot:
            tag += " bot"
        if not info.connected:
            tag = "disconnected"
        lines.append([("class:dim", "  " + tag)])
        if view is not None:
            n = len(view.hands[seat])
            side = snap.side_of(seat)
            pot = "pot taken" if view.team_pot[side] >= 0 else "no pot yet"
            lines.append([("", f"  {n} card{'s' if n != 1 else ''}")])
            lines.append([("class:dim", f"  {pot}")])
        return lines

    # ------------------------------------------------------------------ melds

    def meld_row(self, index: int | None, tm: TableMeld, cols: int) -> Row:
        meld = tm.meld
        view = self.c.view
        assert view is not None
        if meld.is_buraco:
            mark = f"{self.g.clean_mark if meld.clean else self.g.dirty_mark}"
            tag = ("class:buraco", f" {mark}{'clean' if meld.clean else 'dirty'} buraco")
        else:
            tag = ("class:dim", " clean" if meld.clean else " dirty")
        pts = f" {meld.card_points:>3}"
        head = f"{index + 1:>2} " if index is not None else "   "
        room = cols - len(head) - len(pts) - cv.width([tag])
        ids = [view.known[s] for s in tm.slots]
        ordered = self._meld_order(tm, ids)
        cards: Row = self.g.cards(ordered)
        if cv.width(cards) > room:
            cards = self._compact(tm, ordered)
        row: Row = [("class:dim", head), *cards]
        out = [*cv.fit(row, cols - len(pts) - cv.width([tag])), ("class:points", pts), tag]
        if index is not None and self.click is not None:
            handler = self.click("meld", index)
            out = [(f[0], f[1], handler) for f in out]
        return out

    def _meld_order(self, tm: TableMeld, ids: list[int]) -> list[int | None]:
        """The meld's cards in the order it lies (the rules' layout), as card ids."""
        out: list[int | None] = []
        pool = list(ids)
        for face in tm.meld.faces:
            for i, c in enumerate(pool):
                if c >= 0 and self.g.card(c) == self.g.face(face):
                    out.append(c)
                    pool.pop(i)
                    break
        out.extend(c if c >= 0 else None for c in pool)
        return out

    def _compact(self, tm: TableMeld, ordered: list[int | None]) -> Row:
        """A long run as `3♠..Q♠ (10)` plus its wild; a long set as its first cards and `x9`."""
        meld = tm.meld
        if meld.kind is MeldKind.RUN and len(ordered) > 2:
            first, last = ordered[0], ordered[-1]
            row: Row = [self.g.fragment(first), ("", self.g.ellipsis), self.g.fragment(last)]
            row.append(("class:dim", f" ({len(ordered)})"))
            if meld.wild is not None:
                row.append(("class:dim", " w:" + self.g.face(meld.wild)))
            return row
        return [*self.g.cards(ordered[:3]), ("class:dim", f" x{len(ordered)}")]

    def side_block(self, side: int, cols: int, room: int) -> list[Row]:
        """A side's header and as many of its melds as `room` rows allow."""
        snap = self.c.snap
        view = snap.view
        assert view is not None
        mine = side == snap.side_of(snap.me)
        melds = view.melds[side] if side < len(view.melds) else []
        pts = sum(tm.meld.card_points for tm in melds)
        if view.opened[side] or view.initial_minimum(side) == 0:
            opening = "opened" if view.opened[side] else "no minimum"
        else:
            opening = f"min {view.initial_minimum(side)} to open"
        head: Row = [
            ("class:sidehead", f"{side_name(self.c, side)}: {len(melds)} melds, {pts} pts"),
            ("class:dim", f" · {opening}"),
            ("class:dim", " · pot taken" if view.team_pot[side] >= 0 else ""),
        ]
        rows: list[Row] = [cv.fit(head, cols)]
        shown = melds if len(melds) <= room - 1 else melds[: max(0, room - 2)]
        for i, tm in enumerate(shown):
            rows.append(self.meld_row(i if mine else None, tm, cols))
        if len(shown) < len(melds):
            rows.append(cv.fit([("class:dim", f"   +{len(melds) - len(shown)} more (v)")], cols))
        return rows

    def center(self, cols: int, room: int) -> list[Row]:
        snap = self.c.snap
        view = snap.view
        if view is None:
            return [cv.center([("class:dim", "waiting for the deal")], cols)]
        mine = snap.side_of(snap.me)
        order = [mine, *[s for s in snap.sides if s != mine]]
        need = [
            1 + len(view.melds[s]) if s < len(view.melds) else 1 for s in order
        ]
        share = self._share(need, room)
        out: list[Row] = []
        for side, n in zip(order, share, strict=True):
            out.extend(self.side_block(side, cols, n))
        return out

    @staticmethod
    def _share(need: list[int], room: int) -> list[int]:
        """Rows per side: what each needs while it fits, else an even split of the rest."""
        if sum(need) <= room:
            return need
        share = [1] * len(need)
        left = room - len(need)
        order = sorted(range(len(need)), key=lambda i: need[i])
        for k, i in enumerate(order):
            fair = left // (len(need) - k)
            give = min(need[i] - 1, fair)
            share[i] += give
            left -= give
        return share

    # ------------------------------------------------------------------ pile, log

    def pile_row(self) -> Row:
        view = self.c.view
        if view is None:
            return cv.fit([], self.cols)
        pots = sum(1 for p in view.pot_owner if p == -1)
        row: Row = [("", f" Stock {len(view.stock)} · pots left {pots} · pile {len(view.pile)}")]
        if view.pile:
            row.append(("", ", top "))
            row.append(self.g.fragment(view.card(view.pile[-1])))
            if len(view.pile) > 1:
                row.append(("class:dim", "  (v: whole pile)"))
        if view.phase is Phase.FIRST_CHOICE and view.turn == self.c.me:
            row.append(("class:hint", "  first card "))
            row.append(self.g.fragment(view.card(view.first_slot)))
            row.append(("class:hint", ": keep it, or t turns it up"))
        return cv.fit(row, self.cols)

    def actions_row(self) -> Row:
        snap = self.c.snap
        view = snap.view
        if view is None:
            return cv.fit([], self.cols)
        parts: list[str] = []
        for a in reversed(snap.actions[-4:]):
            who = "you" if a.seat == snap.me else snap.seats[a.seat].nick
            parts.append(describe(a.move, view, self.g, who, a.cards))
        return cv.fit([("class:dim", " " + " · ".join(parts))], self.cols)

    # ------------------------------------------------------------------ the hand

    def hand_rows(self) -> list[Row]:
        c = self.c
        view = c.view
        if view is None:
            return [cv.fit([], self.cols)] * 2
        hand = c.hand()
        per_row = max(1, (self.cols - 14) // (CARD_CELL + 1))
        lines = max(1, math.ceil(len(hand) / per_row))
        out: list[Row] = []
        label = f" Hand {len(hand):>2} "
        sel = set(c.selected)
        staged = {s for grp in c.staged for s in grp}
        for line in range(lines):
            chunk = list(enumerate(hand))[line * per_row : (line + 1) * per_row]
            cards: Row = [("class:label", label if line == 0 else " " * len(label))]
            marks: Row = [("", " " * len(label))]
            prev = -1
            for i, slot in chunk:
                cid = view.card(slot)
                grp = -1 if cid is None else group_of(self.g.face_of(cid), c.by_rank)
                gap = " " if prev != -1 and grp != prev else ""
                prev = grp
                handler = self.click("card", i) if self.click is not None else None
                extra = ""
                if slot in sel:
                    extra = " class:selected"
                elif slot in staged:
                    extra = " class:staged"
                if i == c.cursor:
                    extra += " class:cursor"
                style, face = self.g.fragment(cid, extra)
                cell: Row = [(style, face), ("", " ")]
                if handler is not None:
                    cell = [(style, face, handler), ("", " ", handler)]
                cards.extend([("", gap), *cell])
                mark = "  "
                if slot in sel:
                    mark = self.g.selected_mark
                elif slot in staged:
                    mark = "gg"
                elif slot in c.new_cards:
                    mark = "++"
                if i == c.cursor:
                    mark = mark[0] + "^" if mark != "  " else "^^"
                marks.extend([("", gap), ("class:mark", mark + " ")])
            out.append(cv.fit(cards, self.cols))
            out.append(cv.fit(marks, self.cols))
        return out

    def staged_row(self) -> Row:
        c = self.c
        view = c.view
        if view is None or not (c.staged or c.selected):
            return cv.fit([], self.cols)
        row: Row = [("class:dim", " ")]
        for grp in c.staged:
            row.append(("class:dim", "["))
            row.extend(self.g.cards([view.card(s) for s in grp]))
            row.append(("class:dim", "] "))
        if c.selected:
            row.append(("class:dim", "selected: "))
            row.extend(self.g.cards([view.card(s) for s in c.selected]))
        return cv.fit(row, self.cols)

    # ------------------------------------------------------------------ bottom

    def message_row(self) -> Row:
        c = self.c
        if c.confirm is not None:
            return cv.fit([("class:confirm", " " + c.confirm[0])], self.cols)
        if c.message is not None:
            style = {"error": "class:error", "hint": "class:hint"}.get(c.message.kind, "")
            return cv.fit([(style, " " + c.message.text)], self.cols)
        if c.my_turn():
            view = c.view
            assert view is not None
            what = {
                Phase.DRAW: "draw: d the stock, p the pile",
                Phase.FIRST_CHOICE: "keep the first card and play on, or t to turn it up",
                Phase.PLAY: "meld (m), add (a) or discard (x) to end your turn",
            }.get(view.phase, "")
            return cv.fit([("class:myturn", f" Your turn: {what}")], self.cols)
        return cv.fit([], self.cols)

    def chat_row(self) -> Row:
        c = self.c
        if c.chat_text is not None:
            return cv.fit([("class:chatinput", f" say: {c.chat_text}_")], self.cols)
        chat = c.snap.chat
        if not chat:
            return cv.fit([], self.cols)
        line = chat[-1]
        who = "table" if line.seat is None else c.snap.seats[line.seat].nick
        return cv.fit([("class:dim", f" {who}: "), ("", line.text)], self.cols)

    def keys_row(self) -> Row:
        c = self.c
        if c.chat_text is not None:
            keys = "Enter send · Esc cancel"
        elif c.confirm is not None:
            keys = "y yes · n no"
        elif c.choosing_meld is not None:
            keys = "1-9 which meld · Esc cancel"
        elif c.my_turn() and c.phase() is Phase.DRAW:
            keys = "d draw · p take pile · Tab hint · ←→ space select · ? help · q quit"
        elif c.my_turn():
            keys = "space select · m meld · a add · x discard · Tab hint · u undo · ? help"
        else:
            keys = "←→ space select · s sort · c chat · v pile · h history · ? help · q quit"
        return cv.fit([("class:keys", " " + keys)], self.cols, "class:keys")

    # ------------------------------------------------------------------ the whole table

    def table(self) -> list[Row]:
        snap = self.c.snap
        top_rows = [self.title(), self.status()]
        pl = places(len(snap.seats), snap.me)
        # The seats across the top, side by side, one line each.
        if pl.top:
            width = self.cols // len(pl.top)
            lines = [self.seat_lines(s) for s in pl.top]
            summary: Row = []
            for ls in lines:
                merged: Row = []
                for k, part in enumerate(ls):
                    if k:
                        merged.append(("class:dim", " · "))
                    merged.extend((f[0], f[1].strip()) for f in part)
                summary.extend(cv.center(merged, width))
            top_rows.append(cv.fit(summary, self.cols))
        else:
            top_rows.append(cv.fit([], self.cols))
        bottom = [
            self.pile_row(),
            self.actions_row(),
            *self.hand_rows(),
            self.staged_row(),
            self.message_row(),
            self.chat_row(),
            self.keys_row(),
        ]
        room = max(1, self.rows - len(top_rows) - len(bottom))
        middle = self.middle(pl.left, pl.right, room)
        return [*top_rows, *middle, *bottom]

    def middle(self, left: tuple[int, ...], right: tuple[int, ...], room: int) -> list[Row]:
        lcol = SIDE_COL if left else 0
        rcol = SIDE_COL if right else 0
        mid_cols = self.cols - lcol - rcol - (1 if left else 0) - (1 if right else 0)
        center = self.center(mid_cols, room)
        lcells = self._column(left, room, bottom_up=True)
        rcells = self._column(right, room, bottom_up=False)
        rows: list[Row] = []
        for i in range(room):
            row: Row = []
            if left:
                row.extend(cv.fit(lcells[i], lcol))
                row.append(("class:frame", "│"))
            row.extend(center[i] if i < len(center) else cv.fit([], mid_cols))
            if right:
                row.append(("class:frame", "│"))
                row.extend(cv.fit(rcells[i], rcol))
            rows.append(cv.fit(row, self.cols))
        return rows

    def _column(self, seats: tuple[int, ...], room: int, bottom_up: bool) -> list[Row]:
        """The seats of one side column, spread over its height (the nearest seat lowest)."""
        cells: list[Row] = [[] for _ in range(room)]
        if not seats:
            return cells
        order = list(reversed(seats)) if bottom_up else list(seats)
        slot = room // len(order)
        for k, seat in enumerate(order):
            lines = self.seat_lines(seat)
            start = k * slot + max(0, (slot - len(lines)) // 2)
            for j, line in enumerate(lines):
                if start + j < room:
                    cells[start + j] = line
        return cells
