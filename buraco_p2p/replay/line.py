"""`buraco-p2p replay --line`: the match told as plain text, for reading or sharing.

Every deal in order (or the one `--hand` names): the feed's own lines for the shuffles and the
deal, every hand as dealt (face up; or only the chosen seat's, `--seat`), the pots and the
stock face up, then every move in the words the seat's feed used at the table, numbered, with
the hand the mover held at the start of each turn where it is known; the hand's score lines;
and at the end the score's story and `verify`'s verdict. A deal whose keys were never opened
is told from its public record, with the reason.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TextIO

from buraco_p2p.engine import HandResult, HandState, match_sides
from buraco_p2p.replay.story import chart_rows, final_line, side_names, story_of
from buraco_p2p.replay.telling import FACE_UP
from buraco_p2p.replay.timeline import Timeline
from buraco_p2p.text.glyphs import ASCII_SYMBOLS, Glyphs, sort_key_suit

__all__ = ["write_story"]


def _printable(text: str) -> str:
    """Nicknames are the players' own: no control character reaches the terminal."""
    return text if text.isprintable() else "".join(
        ch if ch.isprintable() else "\ufffd" for ch in text
    )  # fmt: skip


def write_story(
    tl: Timeline, out: TextIO, *, seat: int = FACE_UP, deal: int | None = None, cols: int = 80
) -> None:
    """Write the match (or deal number `deal`, from 0) from `seat`'s point of view."""
    g = tl.glyphs
    for line in _story(tl, seat, deal, cols):
        line = _printable(line)
        out.write((line.translate(ASCII_SYMBOLS) if g.ascii else line) + "\n")


def _story(tl: Timeline, seat: int, only: int | None, cols: int) -> Iterator[str]:
    w = tl.walker
    players = tl.players
    seats = ", ".join(f"{w.nick(s)} (seat {s})" for s in range(players))
    who = "every hand face up" if seat == FACE_UP else f"as {w.nick(seat)} saw it"
    yield f"replay of {w.terms.rules.name} at {players}: {seats}; {who}"
    yield f"verify: {tl.verdict_line()}"
    for h, rec in enumerate(w.hands):
        if only is not None and rec.deal != only:
            continue
        yield ""
        yield from _hand(tl, h, seat)
    if only is None:
        yield ""
        yield "the score's story"
        rules = w.rules
        nick = [w.nick(s) for s in range(players)]
        st = story_of(w.hands, nick, rules.target_score, rules.hands)
        for row in chart_rows(st, cols, tl.glyphs):
            yield "".join(f[1] for f in row).rstrip()
        winner = w.table.match.winner if w.closed and w.table.match is not None else None
        yield final_line(st, winner)
        yield from w.notices


def _hand(tl: Timeline, h: int, seat: int) -> Iterator[str]:
    w = tl.walker
    rec = w.hands[h]
    head = f"== hand {rec.deal + 1}, dealt by {w.nick(rec.dealer)}"
    if rec.setup is not None and rec.setup.cut is not None:
        head += f", cut {rec.setup.cut}"
    yield head + " =="
    if rec.setup is None:
        yield from _lines(tl, tl.first_of(rec.deal), seat)
        yield from _stops(tl, h)
        return
    told = tl.told(h, seat)
    yield from told.lines(0)
    why = tl.why_public(h)
    if why:
        yield why
    yield from _dealt(tl, told.state(0), seat, told.public_only)
    prev = -1
    for k in range(1, len(told)):
        mover = told.movers[k]
        if mover != prev and not told.public_only and seat in (FACE_UP, mover):
            before = told.state(k - 1)
            yield f"      {w.nick(mover)} holds {_cards(before, before.hands[mover], tl.glyphs)}"
        prev = mover
        for n, line in enumerate(told.lines(k)):
            yield f"{k:>4}. {line}" if n == 0 else f"      {line}"
    yield from rec.after
    if rec.result is not None:
        yield from _score(tl, rec.result, rec.scores)
    else:
        yield from _stops(tl, h)


def _stops(tl: Timeline, h: int) -> Iterator[str]:
    """Where a log that is not a whole match stops, in `verify`'s words."""
    w = tl.walker
    if h == len(w.hands) - 1 and not w.closed and not w.hands[h].after:
        yield f"the log stops here; verify: {tl.verdict_line()}"


def _lines(tl: Timeline, frame: int | None, seat: int) -> Iterator[str]:
    if frame is not None:
        yield from tl.lines(frame, seat)
        yield tl.note(frame)


def _dealt(tl: Timeline, view: HandState, seat: int, public_only: bool) -> Iterator[str]:
    w, g = tl.walker, tl.glyphs
    if public_only:
        return
    for s in range(view.players):
        if seat in (FACE_UP, s):
            yield f"  {w.nick(s)} (seat {s}): {_cards(view, view.hands[s], g)}"
    if seat == FACE_UP:
        for i, pot in enumerate(view.layout.pots, 1):
            yield f"  pot {i}: {_cards(view, pot, g, sort=False)}"
        yield f"  stock, next first: {_cards(view, list(reversed(view.stock)), g, sort=False)}"
    if view.pile:
        yield f"  face up: {_cards(view, view.pile, g, sort=False)}"


def _cards(view: HandState, slots: list[int] | tuple[int, ...], g: Glyphs, sort: bool = True
           ) -> str:  # fmt: skip
    def order(slot: int) -> tuple[int, int, int]:
        c = view.known[slot]
        return (9, 0, slot) if c < 0 else sort_key_suit(g.face_of(c), c)

    shown = sorted(slots, key=order) if sort else list(slots)
    return " ".join("??" if view.known[s] < 0 else g.card(view.known[s]) for s in shown)


def _score(tl: Timeline, r: HandResult, scores: tuple[int, ...] | None) -> Iterator[str]:
    w = tl.walker
    yield "hand over:"
    for side, lines in enumerate(r.lines):
        players = "+".join(w.nick(s) for s in r.sides[side])
        parts = " · ".join(f"{x.name.replace('_', ' ')} {x.points:+d}" for x in lines if x.points)
        yield f"  {players}: {parts or 'nothing'} = {r.totals[side]:+d}"
    if scores is not None:
        nick = [w.nick(s) for s in range(tl.players)]
        names = side_names(tl.players, match_sides(w.rules), nick)
        yield "  match: " + " · ".join(f"{n} {x}" for n, x in zip(names, scores, strict=True))
