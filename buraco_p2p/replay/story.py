"""The score's story: each side's total hand by hand, as bars a terminal can draw.

Every hand that changed the score (its count, or a charge for walking out) is a row per match
side: the points it brought, a bar as long as the side's match total after it, the total, and
what made it: the melds, the buracos (a mark each, clean or dirty), the pot, going out. It is
all public: the melds, the pots and the scores are the log's, signed by every player. The same
rows are drawn on the full screen (`s`, and at the end of the match) and written by `--line`;
they fit 80 columns, and `--ascii` draws them with `#`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from buraco_p2p.engine import HandState, match_sides
from buraco_p2p.replay.record import HandRecord
from buraco_p2p.text.glyphs import Glyphs

__all__ = ["HandLine", "SideLine", "Story", "chart_rows", "story_of"]

EIGHTHS = " ▏▎▍▌▋▊▉"
Fragment = tuple[str, str]


@dataclass(frozen=True, slots=True)
class SideLine:
    """One match side in one hand: its points, its match total after, how it scored."""

    points: int
    total: int
    melds: int = 0
    clean: int = 0
    dirty: int = 0
    pot: bool = False
    out: bool = False


@dataclass(frozen=True, slots=True)
class HandLine:
    """A hand that changed the score (`deal` counts deals from 0), how it ended in words."""

    deal: int
    how: str
    sides: tuple[SideLine, ...]


@dataclass(frozen=True, slots=True)
class Story:
    """Match sides by their players' names; the hands in order; the target."""

    names: tuple[str, ...]
    hands: tuple[HandLine, ...]
    target: int
    hand_limit: int = 0


def side_names(players: int, sides: int, nick: Sequence[str]) -> tuple[str, ...]:
    """Each match side by its players' nicknames (seat s scores for side s % sides)."""
    return tuple("+".join(nick[s] for s in range(players) if s % sides == m) for m in range(sides))


def story_of(hands: Sequence[HandRecord], nick: Sequence[str], target: int, limit: int = 0
             ) -> Story:  # fmt: skip
    """The story of the deals `hands` (by seat: `nick`), those that changed the score."""
    lines: list[HandLine] = []
    sides = 0
    players = 0
    before: tuple[int, ...] = ()
    for rec in hands:
        if rec.setup is None:
            continue
        rules = rec.setup.rules
        sides, players = match_sides(rules), rules.players
        if not before:
            before = rec.setup.team_scores
        if rec.scores is None:
            continue
        view = rec.public
        result = rec.result
        out: list[SideLine] = []
        for m in range(sides):
            seat = next(s for s in range(players) if s % sides == m)
            points = rec.scores[m] - before[m]
            if result is None or view is None:
                out.append(SideLine(points, rec.scores[m]))
                continue
            out.append(_side(view, result.side_of(seat), points, rec.scores[m],
                             result.went_out is not None and result.side_of(result.went_out)
                             == result.side_of(seat)))  # fmt: skip
        how = "abandoned"
        if result is not None:
            how = "the stock ran out" if result.went_out is None else (
                f"{nick[result.went_out]} went out"
            )  # fmt: skip
        lines.append(HandLine(rec.deal, how, tuple(out)))
        before = rec.scores
    if not sides and hands and hands[0].setup is not None:
        sides = match_sides(hands[0].setup.rules)
    names = side_names(players or len(nick), sides or 2, nick)
    return Story(names, tuple(lines), target, limit)


def _side(view: HandState, side: int, points: int, total: int, out: bool) -> SideLine:
    melds = view.melds[side] if side < len(view.melds) else []
    buracos = [tm.meld.clean for tm in melds if tm.meld.is_buraco]
    pot = side < len(view.team_pot) and view.team_pot[side] >= 0
    return SideLine(points, total, len(melds), buracos.count(True), buracos.count(False), pot, out)


def bar(value: int, scale: int, width: int, ascii: bool) -> str:
    """A bar `value / scale` of `width` columns, to an eighth of a column (ASCII: whole)."""
    if value <= 0 or scale <= 0:
        return ""
    eighths = round(min(1.0, value / scale) * width * 8)
    if ascii:
        return "#" * max(1, round(eighths / 8))
    full, part = divmod(max(1, eighths), 8)
    return "█" * full + (EIGHTHS[part] if part else "")


def chart_rows(story: Story, cols: int, glyphs: Glyphs) -> list[list[Fragment]]:
    """The story as rows of at most `cols` columns: a header, then per hand a row per
    side (the hand's number on its first), then the final line. Styles are the screens'
    class names."""
    name_w = max(6, min(14, max((len(n) for n in story.names), default=6)))
    detail_w = 22
    fixed = 1 + 4 + 1 + name_w + 1 + 7 + 1 + 7 + 2 + detail_w
    width = max(8, cols - fixed)
    scale = max([story.target if not story.hand_limit else 0,
                 *(s.total for h in story.hands for s in h.sides)])  # fmt: skip
    rows: list[list[Fragment]] = [[
        ("class:label", f" {'hand':>4} {'side':<{name_w}} {'points':>7} "
                        f"{'match total':<{width}}{'':>7}  melds buracos pot out"),
    ]]  # fmt: skip
    for h in story.hands:
        for m, s in enumerate(h.sides):
            label = f"{h.deal + 1:>4}" if m == 0 else "    "
            name = story.names[m][:name_w] if m < len(story.names) else f"side {m + 1}"
            b = bar(s.total, scale, width, glyphs.ascii)
            marks = glyphs.clean_mark * s.clean + glyphs.dirty_mark * s.dirty
            what = f"{s.melds} meld{'s' if s.melds != 1 else ''}" if h.how != "abandoned" else (
                "abandoned"
            )  # fmt: skip
            detail = " ".join(x for x in (what, marks, "pot" if s.pot else "",
                                          "out" if s.out else "") if x)  # fmt: skip
            rows.append([
                ("class:dim", f" {label} "),
                ("class:name", f"{name:<{name_w}} "),
                ("class:points", f"{s.points:>+7} "),
                ("class:bar" if m % 2 == 0 else "class:bar2", f"{b:<{width}}"),
                ("class:score", f"{s.total:>7}"),
                ("", f"  {detail}"),
            ])  # fmt: skip
    if not story.hands:
        rows.append([("class:dim", "      no hand counted yet")])
    return rows


def final_line(story: Story, winner: int | None) -> str:
    """The totals, highest first, and the winner if there is one."""
    if not story.hands:
        return "no hand was counted"
    totals = story.hands[-1].sides
    order = sorted(range(len(totals)), key=lambda m: -totals[m].total)
    text = " · ".join(f"{story.names[m]} {totals[m].total}" for m in order)
    return text + (f" (winner: {story.names[winner]})" if winner is not None else "")
