"""The presets by short name, and a meld from its text, for the rules tests."""

from __future__ import annotations

from buraco_p2p.rules import Meld, RuleSet, evaluate_meld, get_preset, parse_cards

US = get_preset("us")
CLASSIC = get_preset("classic")
PC = get_preset("playingcards")
IT = get_preset("italian")
FE = get_preset("fechado")
ALL = [US, CLASSIC, PC, IT, FE]


def meld(text: str, rules: RuleSet = CLASSIC, **kw: object) -> Meld:
    """The meld of the cards written in `text` under `rules` (keywords as `evaluate_meld`)."""
    return evaluate_meld(parse_cards(text), rules, **kw)  # type: ignore[arg-type]
