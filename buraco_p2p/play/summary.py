"""What `resume` says about a saved table without replaying its log: `summary` in the table's
directory, rewritten by the running client whenever the match stands somewhere new.

msgpack map {"players": [nickname by seat], "me": seat, "rules": preset name, "scores":
[int per match side], "hands": hands played, "over": bool}. Seat s scores for match side
s % len(scores). The file is a convenience for the list, never evidence: it is checked for
shape and size like every file of the directory, and a table without one (saved before it
existed, or killed before its seats were drawn) is listed by its id and time alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from buraco_p2p import codec
from buraco_p2p.privatefile import write_private
from buraco_p2p.session import Table

__all__ = ["SUMMARY_FILE", "Summary", "load_summary", "save_summary", "summary_of"]

SUMMARY_FILE = "summary"
MAX_PLAYERS = 6


@dataclass(frozen=True, slots=True)
class Summary:
    players: tuple[str, ...]
    me: int
    rules: str
    scores: tuple[int, ...]
    hands: int
    over: bool

    def to_wire(self) -> dict[str, Any]:
        return {"players": list(self.players), "me": self.me, "rules": self.rules,
                "scores": list(self.scores), "hands": self.hands, "over": self.over}  # fmt: skip

    def sides_text(self) -> str:
        """`Ana & Caio 1240 · you & Bia 980`: each match side by its players, you first."""
        n = len(self.scores)
        mine = self.me % n
        parts = []
        for m in [mine, *[k for k in range(n) if k != mine]]:
            seats = sorted((s for s in range(len(self.players)) if s % n == m),
                           key=lambda s: s != self.me)  # you first  # fmt: skip
            names = ["you" if s == self.me else self.players[s] for s in seats]
            parts.append(f"{' & '.join(names)} {self.scores[m]}")
        return " · ".join(parts)


def summary_of(t: Table) -> Summary | None:
    """Where the match of `t` stands (None before its seats are drawn)."""
    seat = t.my_seat
    if not t.seating or t.match is None or seat is None:
        return None
    players = tuple(t.terms.nicknames[p] for p in t.seating)
    return Summary(players, seat, t.rules.name, tuple(t.match.scores), t.hands_played,
                   t.closed)  # fmt: skip


def save_summary(directory: Path, summary: Summary) -> None:
    write_private(directory / SUMMARY_FILE, codec.pack(summary.to_wire()))


def load_summary(directory: Path) -> Summary | None:
    """The table's summary; None if there is none or it is not one."""
    try:
        value = codec.unpack((directory / SUMMARY_FILE).read_bytes())
    except (OSError, codec.CodecError):
        return None
    if not isinstance(value, dict) or set(value) != {"players", "me", "rules", "scores",
                                                     "hands", "over"}:  # fmt: skip
        return None
    players, me, rules = value["players"], value["me"], value["rules"]
    scores, hands, over = value["scores"], value["hands"], value["over"]
    if not (isinstance(players, list) and 2 <= len(players) <= MAX_PLAYERS
            and all(isinstance(p, str) and len(p) <= 64 for p in players)):  # fmt: skip
        return None
    if not (isinstance(scores, list) and 1 <= len(scores) <= len(players)
            and all(type(x) is int for x in scores)):  # fmt: skip
        return None
    if type(me) is not int or not 0 <= me < len(players) or type(hands) is not int:
        return None
    if not isinstance(rules, str) or len(rules) > 32 or type(over) is not bool:
        return None
    return Summary(tuple(players), me, rules, tuple(scores), hands, over)
