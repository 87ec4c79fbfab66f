"""How long a match lasts, in words: to a target score, a number of hands, or minutes.

A match by hands or by minutes ends by its length and the side ahead wins: the target score
plays no part (`engine.Match`), so no screen names it then. Every client says the same.
"""

from __future__ import annotations

from buraco_p2p.rules import RuleSet
from buraco_p2p.text.narration import count

__all__ = ["how_it_ends", "length_after", "length_now"]


def how_it_ends(rules: RuleSet) -> str:
    """The rule, in one sentence (the rules page)."""
    if rules.hands:
        return (f"the match is {count(rules.hands, 'hand')}: the side ahead after the last "
                "wins (a tie for the lead plays another hand); the target score plays no part")
    if rules.minutes:
        return (f"the match lasts {rules.minutes} minutes: it ends with the hand in play when "
                "the time is up, the side ahead winning (a tie for the lead plays on); the "
                "target score plays no part")
    return (f"the match ends when a side has {rules.target_score} points or more after a hand "
            "(a tie for the lead plays another hand)")


def length_now(rules: RuleSet, hand: int) -> str:
    """Where the match stands, for the header while hand number `hand` (from 1) is shown:
    `/ 3000` (the target), `hand 1 of 2`, `hand 3 of 2: a tie` or `30 min`."""
    if rules.hands:
        if hand > rules.hands:
            return f"hand {hand} of {rules.hands}: a tie"
        return f"hand {max(1, hand)} of {rules.hands}"
    if rules.minutes:
        return f"{rules.minutes} min"
    return f"/ {rules.target_score}"


def length_after(rules: RuleSet, played: int) -> str:
    """The match's length after `played` hands (the panels): `target 3000`, `1 of 2 hands
    played`, `a 30-minute match`."""
    if rules.hands:
        return f"{played} of {count(rules.hands, 'hand')} played"
    if rules.minutes:
        return f"a {rules.minutes}-minute match"
    return f"target {rules.target_score}"
