"""The panels over a replay: each hand's end, the score's story, the deal, the feed, help.

Each returns rows of exactly the screen's width, the table's title on top and the keys below
(`panels.framed`), as the table's own panels do.
"""

from __future__ import annotations

import textwrap

from buraco_p2p.engine import LINE_NAMES
from buraco_p2p.replay.story import chart_rows, final_line, story_of
from buraco_p2p.replay.timeline import FACE_UP, Kind
from buraco_p2p.ui.canvas import Row
from buraco_p2p.ui.panels import LINE_LABELS, framed
from buraco_p2p.ui.replay_screen import ReplayScreen

__all__ = ["HELP", "deal", "feed", "hand_over", "help_panel", "story"]

HELP: tuple[tuple[str, str], ...] = (
    ("→ / space", "the next move (Enter too)"),
    ("←", "the move before"),
    ("t / T", "the next turn / the turn before"),
    ("PgDn / PgUp", "the next hand / this hand's deal, or the hand before"),
    ("Home / End", "the first deal / the end of the match (the score's story)"),
    ("v", "the next point of view: face up, then each seat as it saw the table"),
    ("0-9", "the table as that seat saw it (seats as verify lists them)"),
    ("f", "every card face up"),
    ("s", "the score's story: each side's totals hand by hand"),
    ("d", "the deal: every hand, the pots and the stock as dealt"),
    ("C", "the whole feed up to here (↑ ↓ scroll)"),
    ("r", "the rules of this table (again: the next page)"),
    ("? / Esc", "this help / close a panel"),
    ("q", "quit"),
)


def hand_over(screen: ReplayScreen) -> list[Row]:
    """The end of a hand as the table held it: how it ended, each side's score lines,
    its pot and cards left, the hand's total and the match's, who deals next."""
    snap = screen.c.snap
    if not snap.history:
        return screen.table()
    r = snap.history[-1]
    sides = r.sides
    mine = next((i for i, seats in enumerate(sides) if snap.me in seats), 0)
    order = [mine, *[i for i in range(len(sides)) if i != mine]]
    width = max(10, min(16, (screen.cols - 24) // max(1, len(order))))
    names = [screen.hand_side_label(sides[i], len(sides))[: width - 1] for i in order]
    how = "the stock ran out"
    if r.went_out is not None:
        you = r.went_out == snap.me and not screen.f.face_up
        how = f"{'you' if you else snap.seats[r.went_out].nick} went out"
    rec = screen.f.tl.record(screen.f.tl.frames[screen.f.index])
    number = rec.deal + 1 if rec is not None else len(snap.history)
    body: list[Row] = [[("class:label", f" Hand {number} is over: {how}.")], []]

    def row(label: str, cells: list[str], style: str = "") -> None:
        body.append([(style, f" {label:<22}" + "".join(f"{x:>{width}}" for x in cells))])

    row("", names, "class:label")
    for name in LINE_NAMES:
        vals = [sum(x.points for x in r.lines[i] if x.name == name) for i in order]
        if any(vals) or name in ("melds", "buracos", "going_out", "hand_penalty"):
            row(LINE_LABELS.get(name, name), [str(v) for v in vals])
    view = screen.c.view
    if view is not None and view.ended:
        row("pot", ["taken" if view.team_pot[i] >= 0 else "not taken" for i in order])
        row("cards left (count)", [str(sum(len(view.hands[s]) for s in sides[i]))
                                   for i in order])  # fmt: skip
    row("hand total", [str(r.totals[i]) for i in order], "class:score")
    scores = snap.scores
    if len(scores) == len(sides):
        row("match total", [str(scores[snap.seats[sides[i][0]].match_side]) for i in order],
            "class:score")  # fmt: skip
    if 0 <= snap.next_dealer < len(snap.seats):
        dealer = snap.seats[snap.next_dealer].nick
        if snap.next_dealer == snap.me and not screen.f.face_up:
            dealer = "you"
        body.append([("", f" Next hand: {dealer} deal{'' if dealer == 'you' else 's'}.")])
    return framed(screen, "Hand over", body, "→ the next hand · ← back · s score · q quit")


def story(screen: ReplayScreen, scroll: int) -> list[Row]:
    """The score's story up to this frame, scrolled `scroll` rows up from its end."""
    tl = screen.f.tl
    frame = tl.frames[screen.f.index]
    upto = len(tl.walker.hands) if frame.hand < 0 else frame.hand + (
        1 if frame.kind in (Kind.OVER, Kind.STOP) else 0
    )  # fmt: skip
    nick = [tl.walker.nick(s) for s in range(tl.players)]
    rules = tl.walker.rules
    st = story_of(tl.walker.hands[:upto], nick, rules.target_score, rules.hands)
    rows = chart_rows(st, screen.cols, screen.g)
    winner = None
    if frame.kind is Kind.END and tl.walker.table.match is not None and tl.walker.closed:
        winner = tl.walker.table.match.winner
    foot: list[Row] = [[("class:score", " " + final_line(st, winner))]]
    verdict = tl.verdict_line()
    if frame.kind is Kind.END and verdict:
        foot.extend([("class:dim", " " + line)]
                    for line in textwrap.wrap("verify: " + verdict, screen.cols - 2,
                                              break_on_hyphens=False))
    room = screen.rows - 3 - len(foot) - 1
    head, body = rows[:1], rows[1:]
    if len(body) > room:
        end = len(body) - min(scroll, len(body) - room)
        body = body[end - room : end]
    title = "The score's story"
    if frame.kind is Kind.END:
        title += ": the match is over" if tl.walker.closed else ": the log ends here"
    keys = "↑ ↓ scroll · s or Esc closes · ← back · q quit"
    return framed(screen, title, [*head, *body, [], *foot], keys)


def deal(screen: ReplayScreen) -> list[Row]:
    """The hand as dealt: every seat's cards, the pots, the face-up card, the stock."""
    tl = screen.f.tl
    frame = tl.frames[screen.f.index]
    rec = tl.record(frame)
    body: list[Row] = []
    if rec is None or rec.setup is None:
        body.append([("class:dim", " No hand was dealt here.")])
    elif not rec.opened:
        body.append([("class:dim", " " + tl.why_public(frame.hand))])
    else:
        dealt = tl.told(frame.hand, FACE_UP).state(0)
        cut = rec.setup.cut
        head = f" Hand {rec.deal + 1}, dealt by {tl.walker.nick(rec.dealer)}"
        body.append([("class:label", head + (f", cut {cut}" if cut is not None else ""))])
        for seat in range(dealt.players):
            body.extend(screen.face_up_hand(dealt, seat))
        for i, pot in enumerate(dealt.layout.pots):
            cards = screen.g.cards(dealt.card(s) for s in pot)
            body.append([("class:label", f" pot {i + 1:<6}"), *cards])
        if dealt.pile:
            top = screen.g.fragment(dealt.card(dealt.pile[-1]))
            body.append([("class:label", " face up   "), top])
        stock = [dealt.card(s) for s in reversed(dealt.stock)]
        per = max(1, (screen.cols - 12) // 3)
        for k in range(0, len(stock), per):
            label = " stock     " if k == 0 else " " * 11
            body.append([("class:label", label), *screen.g.cards(stock[k : k + per])])
    return framed(screen, "The deal, as dealt (stock: the next card first)", body,
                  "d or Esc closes · q quit")  # fmt: skip


def feed(screen: ReplayScreen, back: int) -> list[Row]:
    """The whole feed up to this frame, newest last, `back` rows scrolled back."""
    body: list[Row] = []
    for line in screen.c.snap.chat:
        body.extend([("", " " + part)] for part in textwrap.wrap(
            line.text, screen.cols - 2, break_on_hyphens=False) or [""])  # fmt: skip
    room = screen.rows - 3
    back = min(back, max(0, len(body) - room))
    end = len(body) - back
    where = f" · {back} lines back" if back else ""
    return framed(screen, "The feed up to here", body[max(0, end - room) : end],
                  f"↑ ↓ scroll{where} · C or Esc closes · q quit")  # fmt: skip


def help_panel(screen: ReplayScreen) -> list[Row]:
    body: list[Row] = [[("class:label", " Keys")]]
    for key, what in HELP:
        body.append([("class:key", f"  {key:<14}"), ("", what)])
    return framed(screen, "Help: replaying a match", body, "Esc closes · q quit")
