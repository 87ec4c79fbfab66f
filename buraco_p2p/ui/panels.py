"""The panels that cover the table: help, rules, the whole pile and every meld, the match
history, the end of a hand, the end of the match, chat, progress, and the too-small terminal.

Each returns rows of exactly the screen's width; the title stays on top and the keys below.
"""

from __future__ import annotations

from pathlib import Path

from buraco_p2p.engine import LINE_NAMES, HandResult
from buraco_p2p.play.matchlog import audit_command, replay_command
from buraco_p2p.text.glyphs import Glyphs
from buraco_p2p.text.length import length_after
from buraco_p2p.text.narration import LINE_LABELS, count
from buraco_p2p.ui import canvas as cv
from buraco_p2p.ui.canvas import Row
from buraco_p2p.ui.client import Client
from buraco_p2p.ui.names import group_name, match_side_name, side_name
from buraco_p2p.ui.rules_words import rules_in_words
from buraco_p2p.ui.table_screen import Screen

HELP: tuple[tuple[str, str], ...] = (
    ("← → / space", "move the cursor in your hand / select the card (or click it)"),
    ("click a meld", "add the selected cards to that meld"),
    ("u", "undo: take back the last card selected (or the last group or staged meld)"),
    ("Esc", "clear the selection, staged melds and hints, close a panel, cancel a question"),
    ("d", "draw from the stock"),
    ("p", "take the discard pile (where the rules say so, select the cards that meld "
          "its top card first: they are shown to all)"),
    ("t", "turn up the first card drawn and draw the next (where the rules offer it)"),
    ("m / M", "lay down the selection (and grouped melds); M: a run's wild goes low. "
              "Before your side opens, melds short of the minimum are staged (ss), not sent"),
    ("g", "group the selection as one meld of a lay-down of several"),
    ("a", "add the selection to one of your melds (its number if several fit: 1, 11; "
          "Enter takes 1 where 11 could follow)"),
    ("1-9", "add the selection to the meld of that number"),
    ("x", "discard the selected card (or the card under the cursor); a wild asks first"),
    ("Tab / S-Tab", "hint: cycle the legal plays; Enter asks to play the one shown"),
    ("s", "sort the hand by suit or by rank"),
    ("f", "skip ahead: show the other players' moves at once"),
    ("v", "the whole pile and every meld"),
    ("h", "match history"),
    ("r", "the rules of this table"),
    ("c", "chat: type a line, Enter sends it (a pasted re-join code, BRJ-..., is dialed)"),
    ("C", "the whole table feed and chat (↑ ↓ PgUp PgDn scroll)"),
    ("E / V / R", "when a player is away past the limit: end the match / void the hand "
                  "(dealt again) / seat bots for them; each asks first"),
    ("?", "this help (again: the next page)"),
    ("Ctrl-Z", "suspend (fg resumes)"),
    ("q", "quit (asks first)"),
)


def marks_help(g: Glyphs) -> tuple[tuple[str, str], ...]:
    """Every mark the table draws, in the glyphs in use."""
    return (
        (g.selected_mark, "under a card: selected"),
        ("^^", "under a card: the cursor (x^ on a card with another mark)"),
        ("++", "under a card: just drawn or taken"),
        ("gg", "under a card: grouped for a lay-down of several melds (g)"),
        ("ss", "under a card: staged toward your side's opening minimum, not sent: m sends "
               "them all once they reach it (m with nothing selected sends them short, a "
               "failed attempt if the turn ends so); u takes back the last, Esc all"),
        ("oo", "under a card: shown this turn toward your side's opening minimum, still in "
               "your hand; laid down with the rest once the minimum is reached, back in the "
               "hand (a failed attempt) if the turn ends first"),
        (g.clean_mark, "a clean buraco (no wild card)"),
        (g.dirty_mark, "a dirty buraco (with a wild card)"),
        (g.turn_mark, "whose turn it is"),
        ("+170", "in the header: a side's points on the table this hand (melds and "
                 "buracos), then its buracos and pot"),
    )


def framed(screen: Screen, title: str, body: list[Row], keys: str) -> list[Row]:
    """A panel: the table's title row, a heading, the body, the keys at the bottom."""
    cols, rows = screen.cols, screen.rows
    head = [screen.title(), cv.fit([("class:panelhead", f" {title}")], cols, "class:panelhead")]
    room = rows - len(head) - 1
    lines = [cv.fit(r, cols) for r in body[:room]]
    if len(body) > room:
        more = f" {screen.g.ellipsis} {len(body) - room + 1} more"
        lines[-1] = cv.fit([("class:dim", more)], cols)
    lines.extend(cv.fit([], cols) for _ in range(room - len(lines)))
    return [*head, *lines, cv.fit([("class:keys", " " + keys)], cols, "class:keys")]


def help_panel(screen: Screen) -> list[Row]:
    """The keys and the marks, wrapped to the width, in pages of the screen's height."""
    keyw = 14
    room = max(10, screen.cols - keyw - 3)
    body: list[Row] = []
    for title, items in (("Keys", HELP), ("Marks", marks_help(screen.g))):
        body.append([("class:label", f" {title}")])
        for k, what in items:
            lines = _wrap(what, room)
            body.append([("class:key", f"  {k:<{keyw}}"), ("", lines[0])])
            body.extend([("", " " * (keyw + 2) + more)] for more in lines[1:])
    per = max(1, screen.rows - 3)
    pages = [body[i : i + per] for i in range(0, len(body), per)]
    screen.c.rule_pages = len(pages)
    page = screen.c.panel_page % len(pages)
    keys = "Esc closes"
    if len(pages) > 1:
        keys = f"? next page ({page + 1}/{len(pages)}) · Esc closes"
    return framed(screen, "Help", pages[page], keys)


def _wrap(text: str, width: int) -> list[str]:
    """`text` in lines of at most `width` characters, broken at spaces."""
    lines: list[str] = []
    line = ""
    words: list[str] = []
    for word in text.split():  # a word longer than a line (a path, a code) is cut in pieces
        words.extend(word[i : i + width] for i in range(0, len(word), width))
    for word in words:
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    return [*lines, line] if line or not lines else lines


def rules_pages(screen: Screen) -> list[list[Row]]:
    """The rules in plain words, grouped (dealing, melds, pots, going out, scoring), then every
    parameter with its value (the names overrides use), split in pages of the screen's height."""
    rules = screen.c.snap.rules
    room = max(10, screen.cols - 5)
    body: list[Row] = []
    for heading, sentences in rules_in_words(rules):
        body.append([("class:label", f" {heading}")])
        for sentence in sentences:
            lines = _wrap(sentence, room)
            body.append([("", "  - " + lines[0])])
            body.extend([("", "    " + more)] for more in lines[1:])
    body.append([("class:label", " Every parameter (as `--rule KEY=VALUE` names it)")])
    for k, v in rules.to_wire().items():
        if k in ("v", "name"):
            continue
        val = (",".join(str(x) for x in v) or "none") if isinstance(v, list | tuple) else v
        body.append([("class:key", f"  {k}"), ("", f" = {val}")])
    per = max(1, screen.rows - 3)
    return [body[i : i + per] for i in range(0, len(body), per)]


def rules_panel(screen: Screen) -> list[Row]:
    pages = rules_pages(screen)
    screen.c.rule_pages = len(pages)
    page = screen.c.panel_page % len(pages)
    keys = "Esc closes"
    if len(pages) > 1:
        keys = f"r next page ({page + 1}/{len(pages)}) · Esc closes"
    return framed(screen, f"Rules: {screen.c.snap.rules.name}", pages[page], keys)


def pile_panel(screen: Screen) -> list[Row]:
    c = screen.c
    view = c.view
    body: list[Row] = []
    if view is None:
        return framed(screen, "Pile and melds", body, "Esc or v closes")
    pile = [view.card(s) for s in reversed(view.pile)]
    body.append([("class:label", f" Pile ({len(pile)} cards, top first):")])
    per = max(1, (screen.cols - 2) // 3)
    for i in range(0, len(pile), per):
        body.append([("", " "), *screen.g.cards(pile[i : i + per])])
    mine = c.snap.side_of(c.me)
    for side in [mine, *[s for s in c.snap.sides if s != mine]]:
        melds = view.melds[side] if side < len(view.melds) else []
        body.append([("class:sidehead", f" {side_name(c, side)}: {count(len(melds), 'meld')}")])
        for i, tm in enumerate(melds):
            body.append(screen.meld_row(i if side == mine else None, tm, screen.cols))
    return framed(screen, "Pile and melds", body, "Esc or v closes")


def history_panel(screen: Screen) -> list[Row]:
    """Every finished hand's points and the running totals, this player's side first (the
    order of the header)."""
    c = screen.c
    snap = c.snap
    order = match_order(c)
    names = [match_side_name(c, m) for m in order]
    body: list[Row] = [[("class:label", " hand " + "".join(f"{n[:13]:>14}" for n in names))]]
    running = [0] * len(snap.scores)
    for n, r in enumerate(snap.history, 1):
        points = r.match_points
        cells = []
        for m in order:
            t = points[m] if m < len(points) else 0
            running[m] += t
            cells.append(f"{t:>+7} ={running[m]:>5}")
        body.append([("", f" {n:>4} " + "".join(f"{x:>14}" for x in cells))])
    if not snap.history:
        body.append([("class:dim", " no hand finished yet")])
    body.append([("class:dim", f" {length_after(snap.rules, len(snap.history))}")])
    return framed(screen, "Match history", body, "Esc or h closes")


def hand_end_panel(screen: Screen) -> list[Row]:
    """The end of a hand, held on screen until the player goes on: how it ended, then a column
    per side (this player's first) with every scoring line, the pot, the cards left, the hand's
    total and the match's, and who deals next."""
    c = screen.c
    snap = c.snap
    if not snap.history:
        return framed(screen, "Hand over", [], "Enter continues")
    r = snap.history[-1]
    sides = r.sides  # as the hand ended: at three players, after the side change
    mine = next((i for i, seats in enumerate(sides) if snap.me in seats), 0)
    order = [mine, *[i for i in range(len(sides)) if i != mine]]
    width = max(10, min(16, (screen.cols - 24) // max(1, len(order))))
    names = [group_name(c, sides[i], len(sides))[: width - 1] for i in order]
    how = "the stock ran out"
    if r.went_out is not None:
        who = "you" if r.went_out == snap.me else snap.seats[r.went_out].nick
        how = f"{who} went out"
    body: list[Row] = [[("class:label", f" Hand {len(snap.history)} is over: {how}.")], []]

    details: list[Row] = []

    def row(label: str, cells: list[str], style: str = "", into: list[Row] = body) -> None:
        into.append([(style, f" {label:<22}" + "".join(f"{x:>{width}}" for x in cells))])

    row("", names, "class:label")
    for name in LINE_NAMES:
        vals = [_line(r, i, name) for i in order]
        if any(vals) or name in ("melds", "buracos", "going_out", "hand_penalty"):
            row(LINE_LABELS.get(name, name), [str(v) for v in vals], into=details)
    view = c.view
    if view is not None and view.ended and view.setup == r.setup:
        pots = ["taken" if i < len(view.team_pot) and view.team_pot[i] >= 0 else "not taken"
                for i in order]  # fmt: skip
        row("pot", pots, into=details)
        left = [sum(len(view.hands[s]) for s in sides[i]) for i in order]
        row("cards left (count)", [str(n) for n in left], into=details)
    ending = match_end_rows(c, screen.cols) if snap.match_over else []
    if not ending or len(ending) + len(body) + len(details) + 6 <= screen.rows - 3:
        body += details  # at the match's end, where they fit below its result (h, C: more)
    totals = r.totals
    row("hand total", [str(totals[i]) for i in order], "class:score")
    if len(snap.scores) == len(sides):
        ms = [snap.seats[sides[i][0]].match_side for i in order]
        row("match total", [str(snap.scores[m]) for m in ms], "class:score")
    else:
        body.append([("class:score", f" {'match total':<22}"), ("", " " + match_line(c))])
    body.append([("class:dim", f" {length_after(snap.rules, len(snap.history))}")])
    if not snap.match_over and 0 <= snap.next_dealer < len(snap.seats):
        dealer = "you" if snap.next_dealer == snap.me else snap.seats[snap.next_dealer].nick
        body.append([("", f" Next hand: {dealer} deal{'' if dealer == 'you' else 's'}.")])
    body.append([])
    if snap.match_over:  # the result of the match first: the last hand's lines below it
        body = [*ending, [], *body]
        save = "s save the log · " if snap.can_save_log and not snap.log_saved else ""
        keys = f"{save}h history · C the feed · q quit"
    else:
        keys = "Enter next hand · C the feed · h history · q quit"
    return framed(screen, "Hand over", body, keys)


def match_order(c: Client) -> list[int]:
    """The match sides, this player's first, then the others in order: every screen's."""
    snap = c.snap
    mine = snap.seats[snap.me].match_side
    return [mine, *[m for m in range(len(snap.scores)) if m != mine]]


def match_line(c: Client) -> str:
    """The match scores, this player's side first, in the same order on every screen."""
    snap = c.snap
    return " · ".join(f"{match_side_name(c, m)} {snap.scores[m]}" for m in match_order(c))


def _line(r: HandResult, side: int, name: str) -> int:
    if side >= len(r.lines):
        return 0
    return sum(x.points for x in r.lines[side] if x.name == name)


def match_end_rows(c: Client, cols: int) -> list[Row]:
    snap = c.snap
    w = snap.winner
    if w is None:
        rows: list[Row] = [[("class:label", " The match is over.")]]
    else:
        mine = snap.seats[snap.me].match_side
        who = "You win" if w == mine else f"{match_side_name(c, w)} win"
        rows = [[("class:myturn", f" The match is over. {who}, {snap.scores[w]} points.")]]
    # The final table: every side's score, highest first, over the hands played.
    order = sorted(range(len(snap.scores)), key=lambda m: -snap.scores[m])
    hands = len(snap.history)
    rows.append([("class:label", f" Final scores after {count(hands, 'hand')}:")])
    for place, m in enumerate(order, 1):
        mark = "  winner" if m == w else ""
        rows.append([("class:score" if m == w else "",
                      f"  {place}. {match_side_name(c, m):<20} {snap.scores[m]:>6}{mark}")])
    if snap.log_saved:
        path = Path(snap.log_saved)
        rows.append([("", " The match log is kept in")])
        rows.append(whole(str(path), cols))
        rows.append([("", " Audit it with:")])
        rows.append(whole(audit_command(path), cols, "class:key"))
        rows.append([("", " Replay it with:")])
        rows.append(whole(replay_command(path), cols, "class:key"))
    elif c.saved is not None:
        for k, line in enumerate(c.saved):
            rows.append(whole(line, cols, "class:key" if k % 2 else ""))
    elif snap.can_save_log:
        rows.append([("", " s saves the match log; the command that audits it is shown then.")])
    else:
        rows.append([("class:dim", " This table keeps no signed log: nothing to save or audit.")])
    return rows


def whole(text: str, cols: int, style: str = "") -> Row:
    """A path or a command on a row of its own, never split (a copied piece would not run):
    one too wide for the screen says so, and is printed whole when the client quits."""
    if len(text) + 1 <= cols:
        return [(style, " " + text)]
    return [("class:dim", " (wider than this screen: printed whole when you quit)")]


def chat_panel(screen: Screen) -> list[Row]:
    """The whole table feed (every move told, the table's notices, chat), newest last, long
    lines wrapped; ↑ ↓ PgUp PgDn scroll back."""
    c = screen.c
    body: list[Row] = []
    for line in c.snap.chat:
        who = "" if line.seat is None else f"{c.snap.seats[line.seat].nick}: "
        body.extend([("", " " + part)] for part in _wrap(who + line.text, screen.cols - 2))
    room = screen.rows - 3
    back = min(c.panel_page, max(0, len(body) - room))
    c.panel_page = back
    end = len(body) - back
    shown = body[max(0, end - room) : end]
    where = f" · {back} lines back" if back else ""
    keys = f"↑↓ PgUp PgDn scroll{where} · c says something · Esc closes"
    return framed(screen, "Chat and table feed", shown, keys)


def progress_rows(screen: Screen) -> list[Row]:
    """Shuffles and proofs between hands: who is working, how far the checks are."""
    snap = screen.c.snap
    p = snap.progress
    if p is None:
        return []
    who = "" if p.seat is None else f": {snap.seats[p.seat].nick} (seat {p.seat})"
    if p.total <= 0:  # a wait with nothing to count
        return [cv.center([("class:label", f"{p.stage}{who}")], screen.cols)]
    bar_w = max(10, screen.cols - 40)
    done = 0 if p.total <= 0 else int(bar_w * p.done / p.total)
    return [
        cv.center([("class:label", f"{p.stage}{who}")], screen.cols),
        cv.center(
            [("class:good", "#" * done), ("class:dim", "." * (bar_w - done)),
             ("", f" {p.done}/{p.total}")],
            screen.cols,
        ),
    ]


def too_small(cols: int, rows: int, need: tuple[int, int]) -> list[Row]:
    w, h = need
    lines = [
        f"This terminal is {cols}x{rows}.",
        f"The table needs at least {w}x{h}.",
        "Enlarge the window (or press q to quit).",
    ]
    out: list[Row] = [[] for _ in range(rows)]
    top = max(0, rows // 2 - 1)
    for i, line in enumerate(lines):
        if top + i < rows:
            out[top + i] = [("", line[:cols])]
    return [cv.fit(r, cols) for r in out]
