"""The style sheet: colours for the classes the screens use, or none at all under `NO_COLOR`.

Without colour, the selection and the cursor still show (reverse video and underline are not
colours, and the marks under the hand say the same in text), and red cards are told from
black ones by their suits.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from prompt_toolkit.styles import Style

COLOURS = {
    "title": "bold",
    "card.red": "fg:ansired bold",
    "card.black": "bold",
    "card.joker": "fg:ansimagenta bold",
    "card.hidden": "fg:ansibrightblack",
    "selected": "reverse",
    "staged": "underline",
    "cursor": "underline",
    "mark": "fg:ansiyellow",
    "complaint": "bg:ansired fg:ansiwhite bold",
    "error": "fg:ansired bold",
    "hint": "fg:ansicyan",
    "confirm": "fg:ansiyellow bold",
    "myturn": "fg:ansigreen bold",
    "good": "fg:ansigreen",
    "dim": "fg:ansibrightblack",
    "label": "bold",
    "name": "bold",
    "score": "bold",
    "points": "",
    "buraco": "fg:ansiyellow bold",
    "sidehead": "bold underline",
    "keys": "reverse",
    "key": "bold",
    "panelhead": "bold underline",
    "frame": "fg:ansibrightblack",
    "chatinput": "fg:ansicyan",
}

PLAIN = {
    "title": "bold",
    "selected": "reverse",
    "staged": "underline",
    "cursor": "underline",
    "complaint": "reverse bold",
    "error": "bold",
    "confirm": "bold",
    "myturn": "bold",
    "label": "bold",
    "name": "bold",
    "score": "bold",
    "buraco": "bold",
    "sidehead": "bold underline",
    "keys": "reverse",
    "key": "bold",
    "panelhead": "bold underline",
    "card.red": "bold",
    "card.black": "bold",
    "card.joker": "bold",
}


def no_color(environ: Mapping[str, str] | None = None) -> bool:
    """`NO_COLOR` set to anything but the empty string turns colour off (no-color.org)."""
    env = os.environ if environ is None else environ
    return bool(env.get("NO_COLOR", ""))


def style(colour: bool) -> Style:
    return Style.from_dict(COLOURS if colour else PLAIN)
