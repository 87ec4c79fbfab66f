"""The table, drawn as rows of exactly the terminal's width.

From the top: the title (or a cheating complaint, loudly), the scores, the fairness status and
whose turn it is with a timer; the seats across the top; the seats on the left and right with
every side's melds between them; the stock, pots and pile; what the others just did; the own
hand sorted and grouped, with the cursor and the selection marked under it; the message line;
chat; and the keys that work now. `Screen.table()` builds it; the panels (help, rules, pile,
history, the end of a hand) are in `buraco_p2p.ui.panels`.
"""

from __future__ import annotations

from buraco_p2p.bots.levels import level_label
from buraco_p2p.engine import Phase
from buraco_p2p.net.reach.rejoin import looks_like_rejoin
from buraco_p2p.text.agreement import left_text, warning_text
from buraco_p2p.text.length import length_now
from buraco_p2p.text.narration import meld_points
from buraco_p2p.ui import canvas as cv
from buraco_p2p.ui.canvas import Clicker, Row
from buraco_p2p.ui.client import Client, first_card_ahead
from buraco_p2p.ui.hand_rows import HandRows
from buraco_p2p.ui.meld_rows import MeldRows
from buraco_p2p.ui.names import match_side_name
from buraco_p2p.ui.seating import places

SIDE_COL = 15
FEED_MIN = 3  # rows of the table feed however full the table is
MIDDLE_MIN = 6  # rows of the middle however empty the table is
WAIT_SHOWN_S = 3.0  # a wait for another player is shown once it lasts this long


def clock_text(seconds: float) -> str:
    s = max(0, int(seconds))
    return f"{s // 60}:{s % 60:02d}"


# How a peer's link was made, in the few letters a seat label has room for.
LINK_WORDS = {
    "direct (IPv6)": "IPv6",
    "direct (IPv6, punched)": "IPv6 punched",
    "direct (punched)": "punched",
    "mapped": "mapped",
    "relayed by the host": "relayed",
}


def code_pieces(code: str, width: int) -> list[str]:
    """A re-join code on rows of at most `width` characters, broken after a group's dash
    (pasted back, the pieces make the same code: its reader skips dashes and spaces)."""
    pieces: list[str] = []
    piece = ""
    for group in code.split("-"):
        part = f"{piece}-{group}" if piece else group
        if piece and len(part) >= width:  # room for the dash kept at its end
            pieces.append(piece + "-")
            piece = group
        else:
            piece = part
    return [*pieces, piece]


class Screen(MeldRows, HandRows):
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
            text = msg + k.reason + more
            if len(text) > self.cols:  # the feed (C) holds it whole
                text = text[: self.cols - 12] + "… C: all "
            return cv.fit([(loud, text)], self.cols, loud)
        view = snap.view
        hand = f" · hand {view.setup.hand_number + 1}" if view is not None else ""
        rules = f" · {snap.rules.name}" if snap.rules_known else ""
        left = f" {snap.title}{rules}{hand}"
        if self.cols >= 100:
            left = " buraco-p2p ·" + left
        seed = snap.extra.get("seed")
        bar = "class:title"
        right: Row = [(bar, f[1]) for f in self.fairness_text()]
        right.append((bar, f" · seed {seed} " if seed else " "))
        if cv.width(right) + len(left) > self.cols and not snap.fairness.complaints:
            # No complaint to count: the short form leaves the hand number in sight.
            right = [(bar, f[1].split(", ")[0]) for f in self.fairness_text()]
            right.append((bar, f" · seed {seed} " if seed else " "))
        return cv.spread([(bar, left)], right, self.cols, bar)

    def side_label(self, match_side: int) -> str:
        return match_side_name(self.c, match_side)

    def scores(self) -> Row:
        """The match score, this player's side first (the same order on every screen), each
        side's points on the table this hand with its buracos and pot."""
        snap = self.c.snap
        parts: Row = [("", " ")]
        mine = snap.seats[snap.me].match_side
        order = [mine, *[m for m in range(len(snap.scores)) if m != mine]]
        for k, m in enumerate(order):
            if k:
                parts.append(("", "  "))
            parts.append(("class:label", f"{self.side_label(m)} "))
            parts.append(("class:score", str(snap.scores[m])))
            parts.extend(self.on_table(m))
        return parts

    def status(self) -> Row:
        """The scores (`scores`), the target; then whose turn it is."""
        snap = self.c.snap
        parts = self.scores()
        if snap.rules_known:
            parts.append(("class:dim", f" {self.length_text()}"))
        right: Row = [*self.turn_text(), ("", " ")]
        if snap.proposal is not None and cv.width(parts) + cv.width(right) + 1 > self.cols:
            right = [*self.turn_text(short=True), ("", " ")]  # the scores stay whole
        view = snap.view
        if view is not None and not view.ended:
            pots = sum(1 for p in view.pot_owner if p == -1)
            extra: Row = [("class:dim", f"stock {len(view.stock)} · pots {pots}  ")]
            if cv.width(parts) + cv.width(extra) + cv.width(right) + 2 <= self.cols:
                right = [*extra, *right]
        if snap.fairness.complaints:  # the title names the last one: the count stays in sight
            right = [*self.fairness_text(), ("", "  "), *right]
        return cv.spread(parts, right, self.cols)

    def length_text(self) -> str:
        """The target (`/ 3000`), or where a match by hands or minutes stands."""
        snap = self.c.snap
        view = snap.view
        hand = view.setup.hand_number + 1 if view is not None else len(snap.history) + (
            0 if snap.hand_over or snap.match_over else 1
        )
        return length_now(snap.rules, hand)

    def on_table(self, match_side: int) -> Row:
        """What a match side has on the table in the hand in play: `+170 ★★ pot` (meld points
        with buraco bonuses, a mark per clean or dirty buraco, and the pot if taken)."""
        snap = self.c.snap
        view = snap.view
        if view is None:
            return []
        seats = snap.match_side_seats(match_side)
        sides = sorted({snap.seats[s].side for s in seats})
        if len(sides) != 1 or sides[0] >= len(view.melds):
            return []
        side = sides[0]
        melds = view.melds[side]
        marks = "".join(self.g.clean_mark if tm.meld.clean else self.g.dirty_mark
                        for tm in melds if tm.meld.is_buraco)  # fmt: skip
        pot = " pot" if view.team_pot[side] >= 0 else ""
        text = f" +{meld_points(view, side)}{' ' + marks if marks else ''}{pot}"
        return [("class:dim", text)]

    def fairness_text(self) -> Row:
        fair = self.c.snap.fairness
        if not fair.checked:
            return [("class:dim", "practice: no cryptography")]
        n = len(fair.complaints)
        style = "class:complaint" if n else "class:good"
        return [(style, f"{fair.shuffles_verified}/{fair.shuffles_total} shuffles verified, "
                        f"{n} complaint{'s' if n != 1 else ''}")]  # fmt: skip

    def turn_text(self, short: bool = False) -> Row:
        """Whose turn it is and for how long; while another party's proposal waits for us,
        the time left before we may be named too (`short`: `end? 1:47`, for a narrow row)."""
        snap = self.c.snap
        view = snap.view
        if snap.match_over:
            return [("class:label", "match over")]
        prop = snap.proposal
        if prop is not None and not prop.named_me:
            # A proposal waits for our signature: the time left before we may be named too.
            left = left_text(prop.deadline - self.now)
            said = f"{prop.action}? {left}" if short else f"{prop.action} proposed {left}"
            return [("class:error", said)]
        if view is None or snap.hand_over or view.ended:
            return [("class:dim", "between hands")]
        t = clock_text(self.now - snap.turn_since)
        if view.turn == snap.me:
            return [("class:myturn", f"{self.g.turn_mark} your turn {t}")]
        seat = snap.seats[view.turn]
        if seat.bot_level == "strong":
            return [("class:label", f"{seat.nick} is thinking {t}")]  # a search under way
        return [("class:label", f"{seat.nick}'s turn {t}")]

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
            tag += " " + level_label(info.bot_level)
        lines.append([("class:dim", "  " + tag)])
        if not info.connected:
            lines.append([("class:complaint", "  [offline]")])
        elif info.link:
            lines.append([("class:dim", "  " + LINK_WORDS.get(info.link, info.link))])
        if view is not None:
            n = len(view.hands[seat])
            side = snap.side_of(seat)
            pot = "pot taken" if view.team_pot[side] >= 0 else "no pot yet"
            lines.append([("", f"  {n} card{'s' if n != 1 else ''}")])
            lines.append([("class:dim", f"  {pot}")])
        return lines

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

    def middle_need(self, left: tuple[int, ...], right: tuple[int, ...]) -> int:
        """Rows the middle needs now: every side's melds (the centre) and the seats of the
        side columns, whichever is taller; the feed has the rest of the screen."""
        view = self.c.view
        center = 1
        if view is not None:
            center = sum(self.center_need(s) for s in self.c.snap.sides)
        seats = max((sum(len(self.seat_lines(s)) + 1 for s in col) for col in (left, right)),
                    default=0)  # fmt: skip
        return max(MIDDLE_MIN, center, seats)

    def feed_rows(self, k: int) -> list[Row]:
        """The table feed's last `k` lines, newest last: every move told, and chat (C:
        all)."""
        c = self.c
        rows: list[Row] = []
        if c.chat_text is not None:
            k -= 1
        for line in c.snap.chat[-k:] if k > 0 else ():
            who = "" if line.seat is None else f"{c.snap.seats[line.seat].nick}: "
            text = line.text
            if line.seat is None and looks_like_rejoin(text):  # copied whole: never cut
                rows.extend(cv.fit([("", f" {part}")], self.cols)
                            for part in code_pieces(text, self.cols - 1))  # fmt: skip
                continue
            if 1 + len(who) + len(text) > self.cols:  # cut, marked; C shows it whole
                text = text[: max(0, self.cols - 2 - len(who))] + "…"
            rows.append(cv.fit([("class:label", f" {who}"), ("", text)], self.cols))
        rows = rows[max(0, len(rows) - k) :] if k > 0 else []
        rows[:0] = [cv.fit([], self.cols) for _ in range(k - len(rows))]
        if c.chat_text is not None:
            rows.append(cv.fit([("class:chatinput", f" say: {c.chat_text}_")], self.cols))
        return rows

    # ------------------------------------------------------------------ bottom

    def message_rows(self) -> list[Row]:
        """The message line; a question or message too long for it takes a second line (from
        the feed above it), and one too long for two ends in an ellipsis."""
        row = self.message_row()
        full = self.message_text()
        if len(full) + 1 <= self.cols:
            return [row]
        cut = full.rfind(" ", 0, self.cols - 1)
        cut = cut if cut > 0 else self.cols - 1
        style = row[0][0] if row else ""
        first, rest = full[:cut], full[cut:].strip()
        if len(rest) + 2 > self.cols:
            rest = rest[: self.cols - 3] + "…"
        return [cv.fit([(style, " " + first)], self.cols), cv.fit([(style, " " + rest)], self.cols)]

    def message_text(self) -> str:
        """The whole text of the message line (a question, a message), as it would read."""
        c = self.c
        if c.confirm is not None:
            return c.confirm[0]
        if c.message is not None:
            return c.message.text
        return ""

    def message_row(self) -> Row:
        c = self.c
        if c.confirm is not None:
            return cv.fit([("class:confirm", " " + c.confirm[0])], self.cols)
        if c.message is not None:
            style = {"error": "class:error", "hint": "class:hint"}.get(c.message.kind, "")
            return cv.fit([(style, " " + c.message.text)], self.cols)
        snap = c.snap
        if snap.proposal is not None:
            return self.proposal_row()
        if snap.timed_out and not snap.waiting:  # a proposal from another party to join
            return cv.fit([("class:error", " An agreement is proposed (C shows it): "
                                           "E end · V void · R replace")], self.cols)  # fmt: skip
        if snap.waiting and (snap.timed_out or self.now - snap.waiting_since >= WAIT_SHOWN_S):
            who = ", ".join(snap.waiting)
            row: Row = [("class:label", f" Waiting for {who} "),
                        ("class:dim", clock_text(self.now - snap.waiting_since))]  # fmt: skip
            if snap.wait_limit and not snap.timed_out:
                row.append(("class:dim", f" of {clock_text(snap.wait_limit)}: then E end · "
                                         "V void · R replace"))  # fmt: skip
            if snap.timed_out:
                row.append(("class:error", " · past the limit: E end · V void · R replace"))
            return cv.fit(row, self.cols)
        if c.my_turn():
            view = c.view
            assert view is not None
            draw = "draw: d the stock, p the pile"
            if first_card_ahead(view):
                draw = "d draws the hand's first card: keep it, or t turns it up"
            what = {
                Phase.DRAW: draw,
                Phase.FIRST_CHOICE: "keep the first card and play on, or t to turn it up",
                Phase.PLAY: "meld (m), add (a) or discard (x) to end your turn",
            }.get(view.phase, "")
            return cv.fit([("class:myturn", f" Your turn: {what}")], self.cols)
        return cv.fit([], self.cols)

    def proposal_row(self) -> Row:
        """Another party's proposal we have not signed: what it is, the key that agrees (or
        why we cannot), and the time left before the others may name us too; the longest
        wording that fits the width whole."""
        prop = self.c.snap.proposal
        assert prop is not None
        who = ", ".join(prop.silent)
        key = prop.action[0].upper()
        left = prop.deadline - self.now
        if prop.named_me:
            texts = [f" {prop.by} proposes to {prop.action} naming you as gone: play on",
                     f" {prop.by} proposes {prop.action} naming you: play on",
                     f" {prop.action} proposed naming you: play on"]  # fmt: skip
        elif prop.blocked:
            texts = [f" {prop.by} proposes {prop.action} without {who}: {prop.blocked}",
                     f" You cannot agree: {prop.blocked}",
                     f" {prop.blocked}"]  # fmt: skip
        else:
            clock = f"in {left_text(left)}" if left > 0 else "now"
            texts = [f" {prop.by} proposes to {prop.action} without {who}: {key} agrees; "
                     + warning_text(left),
                     f" {prop.by} proposes {prop.action}: {key} agrees, or play on; else you "
                     f"may be named {clock}",
                     f" {prop.action} proposed: {key} agrees or play on; named {clock}",
                     f" {key} agrees, or be named {clock}"]  # fmt: skip
        fits = [t for t in texts if cv.width([("", t)]) <= self.cols]
        return cv.fit([("class:error", fits[0] if fits else texts[-1])], self.cols)

    def keys_row(self) -> Row:
        c = self.c
        if c.chat_text is not None:
            keys = "Enter send · Esc cancel"
        elif c.confirm is not None:
            keys = "y yes · n no"
        elif c.choosing_meld is not None:
            keys = "the meld's number · Enter · Esc cancel"
        elif c.my_turn() and c.phase() is Phase.DRAW:
            keys = "d draw · p take pile · Tab hint · ←→ space select · ? help · q quit"
        elif c.my_turn():
            keys = "space select · m meld · a add · x discard · Tab hint · u undo · ? help"
        else:
            keys = "f skip ahead · C feed · c chat · v pile · h history · r rules · ? help"
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
        message = self.message_rows()
        hand = [*self.hand_rows(), self.staged_row(), *message, self.keys_row()]
        fixed = len(top_rows) + 1 + len(hand)  # the pile row above the feed
        # The feed has every row the middle does not need (at least FEED_MIN); a message
        # of two lines takes its second from the feed.
        feed = max(FEED_MIN, self.rows - fixed - self.middle_need(pl.left, pl.right))
        feed = min(feed, max(FEED_MIN, len(snap.chat)))  # rows nothing fills stay the middle's
        feed_rows = self.feed_rows(feed + len(message) - 1)[len(message) - 1 :]
        bottom = [self.pile_row(), *feed_rows, *hand]
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
