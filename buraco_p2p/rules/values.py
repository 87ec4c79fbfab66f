"""A rule's value in its three forms: typed (`RuleSet` fields), plain (the wire form's str,
int, bool and lists) and text (the VALUE of a `--rule KEY=VALUE` override).

Each field has a kind (bool, int, str, an enumeration, a set of ranks, length-bonus pairs),
read from its declared type; `coerce` checks a typed or plain value of that kind and `parse`
reads one from text, both raising a `RuleOverrideError` that names the key. One piece of code
per kind serves the CLI, the code and a peer's wire form, so they cannot disagree.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum
from typing import Any, Final

from buraco_p2p.rules.choices import (
    HALF_TARGET,
    AceMode,
    BuracoShape,
    Direction,
    DiscardStart,
    DiscardTake,
    GoingOut,
    OpeningCount,
    PotUnplayed,
    RuleOverrideError,
    StockOut,
    WildEnd,
)

__all__ = ["bad", "coerce", "kind_of", "parse", "same_plain", "show", "to_plain"]

_RANK_TEXT: Final = "A23456789TJQK"

_ENUMS: Final[dict[str, type[StrEnum]]] = {
    "wild_end": WildEnd,
    "ace": AceMode,
    "buraco_shape": BuracoShape,
    "going_out": GoingOut,
    "pot_unplayed": PotUnplayed,
    "initial_meld_counts": OpeningCount,
    "discard_start": DiscardStart,
    "discard_take": DiscardTake,
    "stock_out": StockOut,
    "play_direction": Direction,
    "dealer_passes": Direction,
}
_SIMPLE: Final[dict[str, type]] = {"bool": bool, "int": int, "str": str}
_SPECIAL: Final[dict[str, type]] = {
    "vulnerable_from": int,  # or HALF_TARGET
    "set_ranks": frozenset,
    "clean_run_length_bonus": tuple,
}



def kind_of(name: str, declared: object) -> Any:
    """How the field `name` (of declared type `declared`) is parsed and checked."""
    kind = _ENUMS.get(name) or _SPECIAL.get(name) or _SIMPLE.get(str(declared))
    if kind is None:  # pragma: no cover - a new field without a kind is a programming error
        raise AssertionError(f"no kind for rule field {name}")
    return kind


def same_plain(a: object, b: object) -> bool:
    """Equal and of the same types all the way down (so `1` is not `True`, a list no tuple)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, list):
        assert isinstance(b, list)
        return len(a) == len(b) and all(same_plain(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def show(value: object) -> str:
    """A value as a person typed it (an enumeration by its value, ranks as a list)."""
    return str(to_plain(value))


def to_plain(value: object) -> Any:
    """The wire form's value: enumerations by value, sets sorted, tuples as lists."""
    if isinstance(value, StrEnum):
        return value.value
    if isinstance(value, frozenset):
        return sorted(value)
    if isinstance(value, tuple):
        return [to_plain(v) for v in value]
    return value


def bad(key: str, value: object, expected: str) -> RuleOverrideError:
    return RuleOverrideError(
        f"bad value for rule {key!r}: {value!r} (expected {expected})", key=key, value=value
    )


def coerce(key: str, kind: Any, value: object) -> Any:
    """Check and normalise an already-typed value (from code or from a peer's wire form)."""
    if key == "vulnerable_from" and value == HALF_TARGET:
        return HALF_TARGET
    if kind is bool:
        if not isinstance(value, bool):
            raise bad(key, value, "true or false")
        return value
    if kind is int:
        if not isinstance(value, int) or isinstance(value, bool):
            raise bad(
                key, value, "an integer" + (" or half_target" if key == "vulnerable_from" else "")
            )
        return value
    if kind is str:
        if not isinstance(value, str):
            raise bad(key, value, "text")
        return value
    if kind is frozenset:
        if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
            raise bad(key, value, "a list of ranks")
        ranks = list(value)
        if not all(isinstance(x, int) and not isinstance(x, bool) for x in ranks):
            raise bad(key, value, "a list of ranks 1 (ace), 3..13")
        return frozenset(ranks)
    if kind is tuple:
        if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
            raise bad(key, value, "a list of [length, bonus] pairs")
        pairs = []
        for item in value:
            if (
                isinstance(item, (str, bytes))
                or not isinstance(item, Iterable)
                or len(pair := list(item)) != 2
                or not all(isinstance(x, int) and not isinstance(x, bool) for x in pair)
            ):
                raise bad(key, value, "a list of [length, bonus] pairs")
            pairs.append((pair[0], pair[1]))
        return tuple(pairs)
    enum: type[StrEnum] = kind
    if isinstance(value, enum):
        return value
    if isinstance(value, str):
        try:
            return enum(value)
        except ValueError:
            pass
    raise bad(key, value, "one of " + ", ".join(m.value for m in enum))


def parse(key: str, kind: Any, text: str) -> Any:
    """Parse the VALUE of a `--rule KEY=VALUE` override for this key."""
    t = text.strip()
    low = t.lower()
    if kind is bool:
        if low in ("true", "yes", "on", "1"):
            return True
        if low in ("false", "no", "off", "0"):
            return False
        raise bad(key, text, "true or false")
    if kind is int:
        if key == "vulnerable_from" and low == HALF_TARGET:
            return HALF_TARGET
        try:
            return int(t, 10)
        except ValueError:
            raise bad(
                key, text, "an integer" + (" or half_target" if key == "vulnerable_from" else "")
            ) from None
    if kind is str:
        return t
    if kind is frozenset:
        if low in ("", "none"):
            return frozenset()
        ranks = set()
        for part in t.upper().replace(",", " ").split():
            part = "T" if part == "10" else part
            if len(part) != 1 or part not in _RANK_TEXT:
                raise bad(key, text, "ranks like A,J,Q,K or none")
            ranks.add(_RANK_TEXT.index(part) + 1)
        return frozenset(ranks)
    if kind is tuple:
        if low in ("", "none"):
            return ()
        pairs = []
        for part in t.replace(",", " ").split():
            length, sep, bonus = part.partition(":")
            try:
                if not sep:
                    raise ValueError
                pairs.append((int(length, 10), int(bonus, 10)))
            except ValueError:
                raise bad(key, text, "LENGTH:BONUS pairs like 13:500,14:1000 or none") from None
        return tuple(pairs)
    return coerce(key, kind, low)
