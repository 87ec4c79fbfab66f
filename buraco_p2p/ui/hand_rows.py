"""The own hand at the bottom of the table: sorted and grouped, the cursor, the selection,
the grouped melds and the cards just drawn marked on the row under the cards.
"""

from __future__ import annotations

import math

from buraco_p2p.text.glyphs import Glyphs, group_of
from buraco_p2p.ui import canvas as cv
from buraco_p2p.ui.canvas import Clicker, Row
from buraco_p2p.ui.client import Client

CARD_CELL = 3  # two columns of card, one of space


class HandRows:
    """The hand part of `Screen` (`buraco_p2p.ui.table_screen`)."""

    c: Client
    g: Glyphs
    cols: int
    click: Clicker | None

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
        opening = view.opening_slots()
        staged = {s for grp in c.staged for s in grp}
        staged_mark = "ss" if c.staging() else "gg"  # toward the opening, unsent / grouped
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
                    mark = staged_mark
                elif slot in opening:
                    mark = "oo"
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
        row: Row = [("class:dim", " staged, not sent: " if c.staged and c.staging() else " ")]
        for grp in c.staged:
            row.append(("class:dim", "["))
            row.extend(self.g.cards([view.card(s) for s in grp]))
            row.append(("class:dim", "] "))
        if c.selected:
            row.append(("class:dim", "selected: "))
            row.extend(self.g.cards([view.card(s) for s in c.selected]))
        return cv.fit(row, self.cols)
