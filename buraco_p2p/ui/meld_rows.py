"""The melds on the table: each side's header (melds, points, opening, pot) and its melds
with clean, dirty and buraco marks and their card points, fitted to the rows there are.
"""

from __future__ import annotations

from buraco_p2p.engine import TableMeld
from buraco_p2p.rules import MeldKind
from buraco_p2p.text.glyphs import Glyphs
from buraco_p2p.text.narration import count, meld_points
from buraco_p2p.ui import canvas as cv
from buraco_p2p.ui.canvas import Clicker, Row
from buraco_p2p.ui.client import Client
from buraco_p2p.ui.names import side_name


class MeldRows:
    """The melds part of `Screen` (`buraco_p2p.ui.table_screen`)."""

    c: Client
    g: Glyphs
    click: Clicker | None

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
        # The header's number: card points and buraco bonuses (each meld's row: its cards).
        pts = meld_points(view, side)
        bonus = sum(tm.meld.bonus for tm in melds)
        # Melds on the table mean the side has opened (an opening's melds stay in the hand
        # until they reach the minimum), so "opened" is said only of a side with none.
        if view.opened[side] and melds:
            opening = ""
        elif view.opened[side] or view.initial_minimum(side) == 0:
            opening = " · opened" if view.opened[side] else " · no minimum"
        else:
            opening = f" · min {view.initial_minimum(side)} to open"
        said = (f"{side_name(self.c, side)}: {count(len(melds), 'meld')}, {pts} pts"
                + (" with buracos" if bonus else ""))  # fmt: skip
        pot = ""
        if view.team_pot[side] >= 0:  # where the whole does not fit, "pot" says it
            pot = " · pot taken" if cv.width([("", said + opening)]) + 12 <= cols else " · pot"
        head: Row = [("class:sidehead", said), ("class:dim", opening), ("class:dim", pot)]
        rows: list[Row] = [cv.fit(head, cols)]
        held = self.opening_rows(side, cols)
        room -= len(held)
        shown = melds if len(melds) <= room - 1 else melds[: max(0, room - 2)]
        for i, tm in enumerate(shown):
            rows.append(self.meld_row(i if mine else None, tm, cols))
        if len(shown) < len(melds):
            rows.append(cv.fit([("class:dim", f"   +{len(melds) - len(shown)} more (v)")], cols))
        return rows + held

    def opening_rows(self, side: int, cols: int) -> list[Row]:
        """Melds shown this turn toward the side's opening minimum, not yet on the table: where
        a turn's melds count together, the engine holds them in the hand until their sum is
        reached (ending the turn short of it is a failed attempt)."""
        c = self.c
        view = c.view
        assert view is not None
        opening = view.opening
        rows: list[Row] = []
        need = view.initial_minimum(side)
        if opening and c.snap.side_of(view.turn) == side:
            pts = sum(tm.meld.card_points for tm in opening)
            head = f"   opening so far: {pts} of {need} (still in hand)"
            rows.append(cv.fit([("class:hint", head)], cols))
            rows.extend(self.meld_row(None, tm, cols) for tm in opening)
        staged = c.staged_opening() if c.staging() else None
        if staged is not None and side == c.snap.side_of(c.me) and not staged.reached:
            # Staged in this client only: nobody else has seen these cards.
            head = f"   opening so far: {staged.points} of {staged.need} (not sent"
            full = head + ": u or Esc takes it back)"
            head = full if len(full) <= cols - 10 else head + ")"
            rows.append(cv.fit([("class:hint", head)], cols))
            rows.extend(self.meld_row(None, tm, cols) for tm in staged.melds[len(opening):])
        return rows

    def center_need(self, side: int) -> int:
        """Rows a side's block would take with every meld shown."""
        view = self.c.view
        assert view is not None
        melds = view.melds[side] if side < len(view.melds) else []
        opening = self.opening_rows(side, 80)
        return 1 + len(melds) + len(opening)

    def center(self, cols: int, room: int) -> list[Row]:
        snap = self.c.snap
        view = snap.view
        if view is None:
            return [cv.center([("class:dim", "waiting for the deal")], cols)]
        mine = snap.side_of(snap.me)
        order = [mine, *[s for s in snap.sides if s != mine]]
        need = [self.center_need(s) for s in order]
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
