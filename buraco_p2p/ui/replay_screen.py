"""A replay drawn as the table: one frame of a match log, from one seat or face up.

The table's own screen (`table_screen.Screen`) draws the frame, so a seat's view of a replay
looks as that seat's table looked: the scores, the seats, every side's melds, the pile, the
feed's last lines, the seat's own hand. `ReplayScreen` changes what a replay is not: the title
(where in the log, and how far `verify` has found it good), whose turn it is (no clock), the
message line (why a deal is shown from its public record only, `verify`'s word on the log)
and the keys; face up, it draws every seat's hand under the table, names sides by their
players rather than "Us" and "Them", and shows the stock's next cards. The panels over it
are in `replay_panels`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from buraco_p2p.engine import HandState, match_sides
from buraco_p2p.replay.timeline import FACE_UP, Kind, Timeline
from buraco_p2p.text.glyphs import Glyphs, group_of, sort_key_suit
from buraco_p2p.text.narration import count
from buraco_p2p.ui import canvas as cv
from buraco_p2p.ui.canvas import Row
from buraco_p2p.ui.client import Client, Message
from buraco_p2p.ui.feed import ChatLine, Fairness, SeatInfo, TableSnapshot
from buraco_p2p.ui.names import group_name, match_side_name
from buraco_p2p.ui.table_screen import Screen

__all__ = ["Frame", "ReplayScreen", "client_for", "snapshot"]

KEYS = "←→ move · t T turn · PgDn PgUp hand · End · v view · s score · ? help · q quit"


@dataclass(frozen=True, slots=True)
class Frame:
    """What a frame is drawn from: the timeline, the frame's index, the point of view
    (`FACE_UP` or a seat), the log's name, and how far `verify` has got (its first line
    once it is done)."""

    tl: Timeline
    index: int
    seat: int
    name: str
    checking: str = ""

    @property
    def face_up(self) -> bool:
        return self.seat == FACE_UP

    @property
    def bottom(self) -> int:
        """The seat drawn at the bottom of the table."""
        return 0 if self.face_up else self.seat


def snapshot(f: Frame, feed_lines: int | None = 8) -> TableSnapshot:
    """The table at a frame, as the table's screen draws it (`feed_lines`: the feed's last
    lines kept, None for all of it)."""
    tl = f.tl
    frame = tl.frames[f.index]
    walker = tl.walker
    rules = walker.rules
    view = tl.view(frame, f.seat)
    sides = match_sides(rules)
    rec = tl.record(frame)
    seats = tuple(
        SeatInfo(s, walker.nick(s), view.side_of(s) if view is not None else s % sides,
                 s % sides)
        for s in range(rules.players)
    )  # fmt: skip
    shuffles = len(rec.shufflers) if rec is not None else rules.players
    lines = tl.feed(f.index, f.seat, feed_lines)
    return TableSnapshot(
        title=f"replay · {f.name}",
        rules=rules,
        me=f.bottom,
        seats=seats,
        view=view,
        scores=tl.scores(frame),
        fairness=Fairness(True, shuffles, rules.players),
        version=f.index,
        history=tuple(tl.results(frame)),
        hand_over=frame.kind is Kind.OVER,
        chat=tuple(ChatLine(None, line) for line in lines),
        next_dealer=_next_dealer(tl, frame.hand),
    )


def _next_dealer(tl: Timeline, hand: int) -> int:
    hands = tl.walker.hands
    return hands[hand + 1].dealer if 0 <= hand < len(hands) - 1 else -1


def client_for(f: Frame, glyphs: Glyphs, old: Client | None = None) -> Client:
    """A client holding the frame: no cursor, the cards that came into the bottom seat's hand
    this turn marked, the frame's note on the message line."""
    snap = snapshot(f)
    c = Client(snap, lambda move: None, glyphs) if old is None else old
    c.snap = snap
    c.cursor = -1
    c.new_cards = _new_cards(f)
    note = f.tl.note(f.index)
    c.message = Message(note, "hint") if note else None
    return c


def _new_cards(f: Frame) -> set[int]:
    """The slots that came into the bottom seat's hand since its turn began."""
    tl, i = f.tl, f.index
    frame = tl.frames[i]
    if frame.kind is not Kind.MOVE or tl.mover(i) != f.bottom:
        return set()
    start = i  # the turn's first move: the frame before it is the deal or another's move
    while tl.mover(start - 1) == f.bottom:
        start -= 1
    now, before = tl.view(frame, f.seat), tl.view(tl.frames[start - 1], f.seat)
    if now is None or before is None:
        return set()
    return set(now.hands[f.bottom]) - set(before.hands[f.bottom])


class ReplayScreen(Screen):
    """The table's screen, for one frame of a replay."""

    def __init__(self, f: Frame, client: Client, cols: int, rows: int) -> None:
        super().__init__(client, cols, rows, 0.0)
        self.f = f

    # ------------------------------------------------------------------ names

    def side_label(self, match_side: int) -> str:
        """A match side: by its players face up, else as the seat's table named it."""
        if not self.f.face_up:
            return match_side_name(self.c, match_side)
        snap = self.c.snap
        return "+".join(snap.seats[s].nick for s in snap.match_side_seats(match_side))

    def hand_side_label(self, seats: tuple[int, ...], groups: int) -> str:
        if not self.f.face_up:
            return group_name(self.c, seats, groups)
        return "+".join(self.c.snap.seats[s].nick for s in seats)

    # ------------------------------------------------------------------ rows that differ

    def title(self) -> Row:
        f = self.f
        tl = f.tl
        frame = tl.frames[f.index]
        rec = tl.record(frame)
        where = "the end"
        if rec is not None:
            where = f"hand {rec.deal + 1}"
            moves = len(rec.moves_at)
            if frame.kind is Kind.MOVE:
                where += f" · move {frame.k}/{moves}"
            elif frame.kind is Kind.DEAL:
                where += " · the deal"
            elif frame.kind is Kind.OVER:
                where += " · over"
            elif frame.kind is Kind.STOP:
                where += " · stops here"
        who = "face up" if f.face_up else f"as {tl.walker.nick(f.seat)} saw it"
        if rec is not None and rec.setup is not None and not rec.opened:
            who = "public record"
        bar = "class:title"
        verdict = tl.verdict
        if verdict is None:
            right: Row = [("class:dim", f" {f.checking} ")]
        elif verdict["result"] in ("fair", "unfinished"):
            right = [("class:good", f" verified: {verdict['result']} ")]
        elif verdict["result"] == "bad_entry":
            right = [("class:complaint", f" BAD LOG at entry {verdict['index']} ")]
        else:
            right = [("class:complaint", f" {verdict['result'].replace('_', ' ').upper()} ")]
        # The longest that fits beside the verdict: where in the log and whose view come last.
        room = self.cols - cv.width(right)
        lefts = [f" replay · {f.name} · {where} · {who}", f" {f.name} · {where} · {who}",
                 f" {where} · {who}"]  # fmt: skip
        left = next((x for x in lefts if len(x) < room), lefts[-1])
        return cv.spread([(bar, left)], right, self.cols, bar)

    def status(self) -> Row:
        snap = self.c.snap
        parts = self.scores()
        target = snap.rules.target_score if not snap.rules.hands else None
        limit = f" / {target}" if target else f" / {count(snap.rules.hands, 'hand')}"
        parts.append(("class:dim", limit))
        return cv.spread(parts, [*self.turn_text(), ("", " ")], self.cols)

    def turn_text(self, short: bool = False) -> Row:
        view = self.c.view
        if view is None or view.ended:
            return [("class:dim", "between hands")]
        if view.turn == self.c.me and not self.f.face_up:
            return [("class:myturn", f"{self.g.turn_mark} your turn")]
        return [("class:label", f"{self.c.snap.seats[view.turn].nick}'s turn")]

    def seat_lines(self, seat: int) -> list[Row]:
        if not self.f.face_up:
            return super().seat_lines(seat)
        snap = self.c.snap
        view = snap.view
        turn = view is not None and not view.ended and view.turn == seat
        mark = self.g.turn_mark + " " if turn else "  "
        style = "class:myturn" if turn else "class:name"
        lines: list[Row] = [[(style, mark + snap.seats[seat].nick)]]
        if view is not None:
            lines.append([("", "  " + count(len(view.hands[seat]), "card"))])
        return lines

    def side_block(self, side: int, cols: int, room: int) -> list[Row]:
        """The table's block of a side's melds; face up, its heading names the side by its
        players (the table's heading starts with the seat's own name for it)."""
        rows = super().side_block(side, cols, room)
        if self.f.face_up and rows and rows[0]:
            snap = self.c.snap
            seats = snap.side_seats(side)
            table_name = group_name(self.c, seats, len(snap.sides))
            style, text, *_ = rows[0][0]
            if text.startswith(table_name):
                named = self.hand_side_label(seats, len(snap.sides)) + text[len(table_name) :]
                rows[0] = cv.fit([(style, named), *rows[0][1:]], cols)
        return rows

    def pile_row(self) -> Row:
        """The table's row for the stock, pots and pile, without its hints for the keys of
        play (`v` is the point of view here)."""
        row = super().pile_row()
        kept = [f for f in row if f[0] != "class:hint" and "(v: " not in f[1]]
        return cv.fit(kept, self.cols)

    def staged_row(self) -> Row:
        """Face up: the stock's next cards, top first."""
        view = self.c.view
        rec = self.f.tl.record(self.f.tl.frames[self.f.index])
        if not self.f.face_up or view is None or not view.stock or not (rec and rec.opened):
            return cv.fit([], self.cols)
        nxt = [view.card(s) for s in reversed(view.stock)]
        room = max(1, (self.cols - 22) // 3)
        row: Row = [("class:dim", " stock, next first: "), *self.g.cards(nxt[:room])]
        if len(nxt) > room:
            row.append(("class:dim", f" {self.g.ellipsis}"))
        return cv.fit(row, self.cols)

    def hand_rows(self) -> list[Row]:
        if not self.f.face_up:
            return super().hand_rows()
        view = self.c.view
        if view is None:
            return [cv.fit([], self.cols)]
        out: list[Row] = []
        n = view.players
        for k in range(n):
            out.extend(self.face_up_hand(view, (self.f.bottom + k) % n))
        return out

    def face_up_hand(self, view: HandState, seat: int) -> list[Row]:
        """A seat's hand, face up, sorted by suit: on as many rows as it needs."""
        label_w = 11
        cards = sorted(view.hands[seat], key=self._order(view))
        per_row = max(1, (self.cols - label_w - 4) // 3)
        lines = max(1, math.ceil(len(cards) / per_row))
        turn = not view.ended and view.turn == seat
        name = f" {self.c.snap.seats[seat].nick[: label_w - 2]}"
        out: list[Row] = []
        for line in range(lines):
            row: Row = [("class:myturn" if turn else "class:label",
                         f"{name if line == 0 else '':<{label_w}}")]  # fmt: skip
            prev = -1
            for slot in cards[line * per_row : (line + 1) * per_row]:
                cid = view.card(slot)
                grp = -1 if cid is None else group_of(self.g.face_of(cid), False)
                if prev != -1 and grp != prev:
                    row.append(("", " "))
                prev = grp
                row.extend([self.g.fragment(cid), ("", " ")])
            out.append(cv.fit(row, self.cols))
        return out

    def _order(self, view: HandState) -> Callable[[int], tuple[int, int, int]]:
        def order(slot: int) -> tuple[int, int, int]:
            c = view.known[slot]
            return (9, 0, slot) if c < 0 else sort_key_suit(self.g.face_of(c), c)

        return order

    def message_row(self) -> Row:
        """The frame's note, if it has one: nothing here waits for a move or an answer."""
        if self.c.message is None:
            return cv.fit([], self.cols)
        return super().message_row()

    def keys_row(self) -> Row:
        return cv.fit([("class:keys", " " + KEYS)], self.cols, "class:keys")
