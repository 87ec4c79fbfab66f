"""Rows of styled text cut and padded to an exact width: the screen is built from these.

A row is a list of prompt_toolkit fragments, `(style, text)` or `(style, text, mouse_handler)`.
Every row the screen draws is exactly the terminal's width, so nothing wraps and a resize only
changes what is drawn, never breaks it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from prompt_toolkit.utils import get_cwidth

Row = list[Any]  # fragments: (style, text) or (style, text, handler)

# Mouse handlers by target: ("card", index in the hand) or ("meld", index of an own meld).
Clicker = Callable[[str, int], Callable[[Any], object]]


def width(row: Sequence[Any]) -> int:
    return sum(get_cwidth(f[1]) for f in row)


def printable(text: str) -> str:
    """`text` with every control or format character shown as U+FFFD: nicknames, chat and
    reasons come from other peers, and none of them may move the cursor or break a row."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else "\ufffd" for ch in text)


def fit(row: Sequence[Any], cols: int, style: str = "") -> Row:
    """The row cut to `cols` columns or padded with spaces, every text made printable."""
    out: Row = []
    used = 0
    for frag in row:
        text = frag[1]
        if not text.isprintable():
            text = printable(text)
            frag = (frag[0], text, *frag[2:])
        w = get_cwidth(text)
        if used + w <= cols:
            out.append(frag)
            used += w
            continue
        room = cols - used
        cut = ""
        for ch in text:
            cw = get_cwidth(ch)
            if cw > room:
                break
            cut += ch
            room -= cw
        if cut:
            out.append((frag[0], cut, *frag[2:]))
            used += get_cwidth(cut)
        break
    if used < cols:
        out.append((style, " " * (cols - used)))
    return out


def center(row: Sequence[Any], cols: int, style: str = "") -> Row:
    row = clean(row)
    w = width(row)
    if w >= cols:
        return fit(row, cols, style)
    left = (cols - w) // 2
    return fit([(style, " " * left), *row], cols, style)


def clean(row: Sequence[Any]) -> Row:
    """The fragments with their texts made printable (see `printable`)."""
    return [f if f[1].isprintable() else (f[0], printable(f[1]), *f[2:]) for f in row]


def right(row: Sequence[Any], cols: int, style: str = "") -> Row:
    row = clean(row)
    w = width(row)
    if w >= cols:
        return fit(row, cols, style)
    return [(style, " " * (cols - w)), *row]


def spread(left: Sequence[Any], right_part: Sequence[Any], cols: int, style: str = "") -> Row:
    """`left` at the start and `right_part` at the end of one row (the left cut if need be)."""
    right_part = clean(right_part)
    rw = width(right_part)
    if rw >= cols:
        return fit(right_part, cols, style)
    room = cols - rw
    if width(left) > room - 1:  # never run into the right part: cut, marked, with a gap
        return [*fit(left, room - 2, style), (style, "…"), (style, " "), *right_part]
    return [*fit(left, room, style), *right_part]


def text(s: str, style: str = "") -> Row:
    return [(style, s)]


def join(rows: Sequence[Row]) -> list[Any]:
    """The rows as one fragment list, one line each.

    Unstyled blanks at the end of a row are left out: the terminal shows nothing there
    anyway, and cells never written cost nothing to draw.
    """
    out: list[Any] = []
    for i, row in enumerate(rows):
        if i:
            out.append(("", "\n"))
        end = len(row)
        while end and row[end - 1][0] == "" and not row[end - 1][1].strip(" "):
            end -= 1
        out.extend(row[:end])
    return out
