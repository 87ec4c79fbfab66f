"""Rule presets as data: one frozen `RuleSet` per way people play Buraco.

The five sources disagree, so every point where they differ is a field here and each preset is
just a set of values (docs/rules.md cites the source line of each one). Peers agree on the rules
of a table by comparing `digest()`, so the wire form is canonical and versioned.
"""

from __future__ import annotations

import dataclasses
import difflib
import hashlib
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from functools import partial
from types import MappingProxyType
from typing import Any, Final, Literal

import msgpack

from buraco_p2p.cards import ACE, KING


class RuleError(ValueError):
    """A rule set, preset name, override or wire form that cannot be used."""


class RuleOverrideError(RuleError):
    """A `KEY=VALUE` override with an unknown key or a value the key does not accept."""

    def __init__(self, message: str, *, key: str, value: object = None) -> None:
        super().__init__(message)
        self.key = key
        self.value = value

    def __reduce__(self) -> tuple[Callable[..., RuleOverrideError], tuple[str]]:
        # The default rebuilds an exception from `args` alone, without the keyword arguments.
        return partial(type(self), key=self.key, value=self.value), (str(self),)


class MeldKind(StrEnum):
    RUN = "run"
    SET = "set"


class WildEnd(StrEnum):
    """Where a wild that is not filling a gap may stand in a run."""

    EITHER = "either"  # the player picks the low or the high end
    HIGH = "high"  # Italian: the high end, unless the run already ends in a top ace


class End(StrEnum):
    """One end of a run, as a player's choice for a wild."""

    LOW = "low"
    HIGH = "high"


class AceMode(StrEnum):
    LOW_OR_HIGH = "low_or_high"
    LOW_ONLY = "low_only"
    HIGH_ONLY = "high_only"


class BuracoShape(StrEnum):
    """Which melds of `buraco_length`+ cards count as a buraco."""

    RUN = "run"
    RUN_OR_SET = "run_or_set"


class GoingOut(StrEnum):
    """The buraco a team needs on the table before a player may go out."""

    CLEAN_BURACO = "clean_buraco"
    ANY_BURACO = "any_buraco"


class PotUnplayed(StrEnum):
    """A pot taken when the hand ends before any of its cards was played."""

    PENALTY = "penalty"  # minus the penalty; its cards are not counted
    COUNT = "count"  # its cards count as cards left in hand
    PENALTY_AND_COUNT = "penalty_and_count"  # both


class OpeningCount(StrEnum):
    """What must reach the initial meld minimum."""

    TURN = "turn"  # the card points of every meld laid down in the team's opening turn
    ONE_MELD = "one_meld"  # one meld alone


class DiscardStart(StrEnum):
    FIRST_PLAYER_PEEK = "first_player_peek"  # no pile; first player may keep or turn the top
    FACE_UP = "face_up"  # one card turned face up at the deal
    NONE = "none"  # no pile; first player just draws


class DiscardTake(StrEnum):
    WHOLE_PILE = "whole_pile"


class StockOut(StrEnum):
    POT_BECOMES_STOCK = "pot_becomes_stock"  # next untaken pot becomes the stock, else hand ends
    HAND_ENDS = "hand_ends"  # the hand ends once the last stock card's turn is over


class Direction(StrEnum):
    CLOCKWISE = "clockwise"
    COUNTER_CLOCKWISE = "counter_clockwise"


HALF_TARGET: Final = "half_target"

# The sane range of every numeric rule (docs/rules.md, "Ranges"). Outside them a hand could
# stall (a one-card pot taken in flight can be neither melded nor discarded), a match never
# end or no team ever open, or a score outgrow the 64-bit integers of the state hash and the
# codec: with these bounds a hand scores well under a million points either way.
POINTS_MAX: Final = 1_000
BONUS_MAX: Final = 10_000
RANGES: Final[Mapping[str, tuple[int, int]]] = MappingProxyType(
    {
        "hand_size": (1, 15),
        "pot_size": (2, 15),
        "max_wilds": (0, 1),
        "buraco_length": (3, 14),
        "points_joker": (0, POINTS_MAX),
        "points_deuce": (0, POINTS_MAX),
        "points_ace": (0, POINTS_MAX),
        "points_8_to_k": (0, POINTS_MAX),
        "points_3_to_7": (0, POINTS_MAX),
        "bonus_clean": (0, BONUS_MAX),
        "bonus_dirty": (0, BONUS_MAX),
        "initial_meld_min": (0, 200),
        "initial_meld_min_vulnerable": (0, 200),
        "initial_meld_failed_step": (0, 50),
        "vulnerable_from": (0, 100_000),
        "target_score": (1, 100_000),
        "going_out_bonus": (0, BONUS_MAX),
        "no_pot_penalty": (0, BONUS_MAX),
        "pot_unplayed_penalty": (0, BONUS_MAX),
        "cut_22_bonus": (0, BONUS_MAX),
        "solo_pot_size": (2, 30),
        "hands": (0, 1000),
        "minutes": (0, 1440),
    }
)
SET_RANKS_ALLOWED: Final = frozenset({ACE, *range(3, KING + 1)})
FACE_SET_RANKS: Final = frozenset({ACE, 11, 12, KING})
WIRE_VERSION: Final = 1
_NAME: Final = re.compile(r"[A-Za-z0-9_.+-]{1,64}")


@dataclass(frozen=True, slots=True)
class RuleSet:
    """Every parameter on which the presets differ. Field docs live in docs/rules.md."""

    name: str
    deck_size: int
    set_ranks: frozenset[int]
    wild_end: WildEnd
    points_joker: int
    points_deuce: int
    buraco_shape: BuracoShape
    clean_run_length_bonus: tuple[tuple[int, int], ...]
    initial_meld_min: int
    initial_meld_min_vulnerable: int
    vulnerable_from: int | Literal["half_target"]
    initial_meld_failed_step: int
    going_out: GoingOut
    discard_wild_to_go_out: bool
    pot_unplayed: PotUnplayed
    target_score: int
    discard_start: DiscardStart
    may_discard_lone_taken_card: bool
    must_meld_top_discard: bool
    stock_out: StockOut
    cut_22_bonus: int
    play_direction: Direction
    players: int = 4
    hand_size: int = 11
    pot_size: int = 11
    pots: int = 2
    one_set_per_rank: bool = True
    max_wilds: int = 1
    ace: AceMode = AceMode.LOW_OR_HIGH
    wild_deuce_settles_natural: bool = True
    points_ace: int = 15
    points_8_to_k: int = 10
    points_3_to_7: int = 5
    buraco_length: int = 7
    bonus_clean: int = 200
    bonus_dirty: int = 100
    going_out_needs_pot: bool = True
    going_out_bonus: int = 100
    no_pot_penalty: int = 100
    pot_unplayed_penalty: int = 100
    discard_take: DiscardTake = DiscardTake.WHOLE_PILE
    pot_in_flight: bool = True
    empty_hand_needs_going_out: bool = True
    dealer_passes: Direction = Direction.CLOCKWISE
    go_out_by_discard_only: bool = False
    initial_meld_counts: OpeningCount = OpeningCount.TURN
    set_suits_differ: bool = False
    pot_played_by_discard: bool = True
    teams: int = 2
    solo_pot_size: int = 18
    hands: int = 0
    minutes: int = 0
    _face_points: tuple[int, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        _validate(self)
        object.__setattr__(self, "_face_points", _face_point_table(self))

    # ----- derived values the engine asks for -----

    @property
    def jokers(self) -> int:
        return self.deck_size % 52

    @property
    def packs(self) -> int:
        """Packs of 52 in the deck: two, or three at a table of six."""
        return self.deck_size // 52

    @property
    def pot_sizes(self) -> tuple[int, ...]:
        """The pots in dealing order (the order they become the stock when it runs out).

        Two pots of `pot_size` at two and four players, three at six; at three, one of
        `pot_size` then the `solo_pot_size` one the first player to empty a hand takes.
        """
        if self.players == 3 and self.pots:
            return (self.pot_size, self.solo_pot_size)
        return (self.pot_size,) * self.pots

    @property
    def cut_bonus_size(self) -> int:
        """The cut (in cards) that earns `cut_22_bonus`: the cards the pots need at the
        count's standard deal (22 at two and four players, 29 at three, 33 at six)."""
        return CUT_BONUS_SIZE[self.players]

    @property
    def sets_allowed(self) -> bool:
        return bool(self.set_ranks)

    @property
    def stock_size(self) -> int:
        """Stock after the deal, before any face-up card is turned."""
        return self.deck_size - self.players * self.hand_size - sum(self.pot_sizes)

    @property
    def face_points(self) -> tuple[int, ...]:
        """Points per `Card.code` (0..51 suited faces, 52 the joker): the scoring hot path."""
        return self._face_points

    def vulnerable(self, team_score: int) -> bool:
        """Whether a team with this match score meets the higher initial meld minimum."""
        if self.vulnerable_from == HALF_TARGET:
            return 2 * team_score >= self.target_score
        return team_score >= self.vulnerable_from

    def initial_meld_minimum(self, team_score: int, failed_attempts: int = 0) -> int:
        """Card points a team's first melding turn of a hand must reach."""
        if failed_attempts < 0:
            raise ValueError("failed_attempts must be >= 0")
        base = (
            self.initial_meld_min_vulnerable
            if self.vulnerable(team_score)
            else (self.initial_meld_min)
        )
        return base + self.initial_meld_failed_step * failed_attempts

    def buraco_bonus(self, kind: MeldKind, size: int, clean: bool) -> int:
        """The bonus a meld of this shape earns while it lies on the table."""
        if size < self.buraco_length:
            return 0
        if kind is MeldKind.SET and self.buraco_shape is BuracoShape.RUN:
            return 0
        if not clean:
            return self.bonus_dirty
        if kind is MeldKind.RUN:
            for length, bonus in self.clean_run_length_bonus:
                if length == size:
                    return bonus
        return self.bonus_clean

    # ----- overrides, wire form, digest -----

    def with_overrides(self, overrides: Mapping[str, object]) -> RuleSet:
        """A copy with some parameters changed; string values are parsed as on the CLI."""
        changes: dict[str, Any] = {}
        for key, value in overrides.items():
            if key not in OVERRIDABLE:
                raise _unknown_key(key)
            parsed = _parse_value(key, value) if isinstance(value, str) else _coerce(key, value)
            changes[key] = parsed
        _follow_player_count(self, changes)
        return dataclasses.replace(self, **changes)

    def to_wire(self) -> dict[str, Any]:
        """Plain msgpack-friendly form: str keys, and str/int/bool/list values only."""
        out: dict[str, Any] = {"v": WIRE_VERSION}
        for name in _KINDS:
            out[name] = _to_plain(getattr(self, name))
        return out

    @classmethod
    def from_wire(cls, data: object) -> RuleSet:
        """Rebuild from a peer's `to_wire()` output; anything malformed is a RuleError."""
        if not isinstance(data, Mapping):
            raise RuleError(f"rules must be a map, not {type(data).__name__}")
        version = data.get("v")
        if type(version) is not int or version != WIRE_VERSION:
            raise RuleError(f"unsupported rules wire version: {version!r}")
        keys = set(data) - {"v"}
        missing = [k for k in _KINDS if k not in keys]
        extra = sorted(str(k) for k in keys - set(_KINDS))
        if missing or extra:
            raise RuleError(f"rules wire form: missing keys {missing}, unknown keys {extra}")
        values = {k: _coerce(k, data[k]) for k in _KINDS}
        rules = cls(**values)
        # One rule set has one wire form: ranks sorted and unique, pairs as two-item lists,
        # enumerations as their names. Anything else would give two digests for one table.
        wire = rules.to_wire()
        odd = [k for k in _KINDS if not _same_plain(wire[k], data[k])]
        if odd:
            raise RuleError(f"rules wire form is not canonical for {odd}")
        return rules

    def canonical_bytes(self) -> bytes:
        """Canonical encoding: msgpack of the sorted (key, value) pairs of the wire form."""
        wire = self.to_wire()
        packed: bytes = msgpack.packb([[k, wire[k]] for k in sorted(wire)], use_bin_type=True)
        return packed

    def digest(self) -> bytes:
        """sha256 of the canonical encoding, so four peers can check they play the same rules."""
        return hashlib.sha256(self.canonical_bytes()).digest()

    def changes_from(self, other: RuleSet) -> dict[str, tuple[object, object]]:
        """Parameters that differ from `other` (e.g. the base preset): key -> (theirs, ours)."""
        return {
            k: (getattr(other, k), getattr(self, k))
            for k in _KINDS
            if k != "name" and getattr(other, k) != getattr(self, k)
        }


# ----- player counts -----

PLAYER_COUNTS: Final = (2, 3, 4, 6)
# Sides at the deal by player count (six may choose 2 instead): each player at two and three,
# two partnerships at four, three at six.
DEFAULT_TEAMS: Final = {2: 2, 3: 3, 4: 2, 6: 3}
POTS_BY_COUNT: Final = {2: 2, 3: 2, 4: 2, 6: 3}
CUT_BONUS_SIZE: Final = {2: 22, 3: 29, 4: 22, 6: 33}


def _follow_player_count(base: RuleSet, changes: dict[str, Any]) -> None:
    """Fill in what a new player count implies unless the overrides say it themselves: the
    deck (three packs at six, with the preset's jokers per pack), the pots and the teams.

    `teams` is a choice only at six; naming it at another count is refused, so that
    `teams=2` with four players is an error rather than a silent no-op.
    """
    players = changes.get("players", base.players)
    if "teams" in changes and players != 6:
        raise RuleOverrideError(
            f"teams={_show(changes['teams'])}: only a table of six players chooses its teams "
            "(teams=2 or teams=3)",
            key="teams",
            value=changes["teams"],
        )
    if players == base.players or players not in PLAYER_COUNTS:
        return
    packs = 3 if players == 6 else 2
    changes.setdefault("deck_size", packs * 52 + base.jokers // base.packs * packs)
    changes.setdefault("pots", POTS_BY_COUNT[players] if base.pots else 0)
    changes.setdefault("teams", DEFAULT_TEAMS[players])


# ----- validation -----


def _validate(r: RuleSet) -> None:
    def need(ok: bool, key: str, why: str) -> None:
        if not ok:
            value = getattr(r, key)
            raise RuleOverrideError(f"{key}={_show(value)}: {why}", key=key, value=value)

    need(
        isinstance(r.name, str) and _NAME.fullmatch(r.name) is not None,
        "name",
        "must be 1..64 letters, digits or _.+-",
    )
    need(r.players in PLAYER_COUNTS, "players", "must be 2, 3, 4 or 6")
    if r.players == 6:
        need(r.deck_size in (156, 162), "deck_size", "six players use three packs: 156 or 162")
        need(r.teams in (2, 3), "teams", "six players play in 3 teams of two or 2 teams of three")
        need(r.pots in (0, 3), "pots", "six players play with 3 pots, or 0")
    else:
        need(r.deck_size in (104, 108), "deck_size", "must be 104 or 108")
        need(
            r.teams == DEFAULT_TEAMS[r.players],
            "teams",
            f"{r.players} players start as {DEFAULT_TEAMS[r.players]} sides",
        )
        need(
            0 <= r.pots <= 2 if r.players == 4 else r.pots in (0, 2),
            "pots",
            "must be 0..2" if r.players == 4 else f"{r.players} players play with 2 pots, or 0",
        )
    for key, (lo, hi) in RANGES.items():
        value = getattr(r, key)
        if key == "vulnerable_from" and value == HALF_TARGET:
            continue
        need(type(value) is int and lo <= value <= hi, key, f"must be {lo}..{hi}")
    need(r.stock_size >= 2, "hand_size", "the deal leaves no stock")
    need(r.set_ranks <= SET_RANKS_ALLOWED, "set_ranks", "ranks must be A or 3..K")
    lengths = [length for length, _ in r.clean_run_length_bonus]
    need(
        lengths == sorted(set(lengths)) and all(r.buraco_length <= n <= 14 for n in lengths),
        "clean_run_length_bonus",
        "lengths must be increasing, between buraco_length and 14",
    )
    need(
        all(0 <= bonus <= BONUS_MAX for _, bonus in r.clean_run_length_bonus),
        "clean_run_length_bonus",
        f"bonuses must be 0..{BONUS_MAX}",
    )
    need(isinstance(r.go_out_by_discard_only, bool), "go_out_by_discard_only", "must be a bool")
    need(
        r.vulnerable_from == HALF_TARGET or isinstance(r.vulnerable_from, int),
        "vulnerable_from",
        "must be a score or half_target",
    )


def _face_point_table(r: RuleSet) -> tuple[int, ...]:
    by_rank = [0, r.points_ace, r.points_deuce]
    by_rank += [r.points_3_to_7] * 5 + [r.points_8_to_k] * 6
    return (*(by_rank[code % 13 + 1] for code in range(52)), r.points_joker)


# ----- field kinds: parsing (CLI), coercion (wire / typed values) -----

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


def _field_kinds() -> dict[str, Any]:
    """How each public field is parsed and checked, in declaration order (the wire order)."""
    kinds: dict[str, Any] = {}
    for f in dataclasses.fields(RuleSet):
        if f.name.startswith("_"):
            continue
        kind = _ENUMS.get(f.name) or _SPECIAL.get(f.name) or _SIMPLE.get(str(f.type))
        if kind is None:  # pragma: no cover - a new field without a kind is a programming error
            raise AssertionError(f"no kind for rule field {f.name}")
        kinds[f.name] = kind
    return kinds


_KINDS: Final = _field_kinds()
_UNRANGED: Final = {k for k, kind in _KINDS.items() if kind is int} - set(RANGES)
# The values of these depend on the player count: `_validate` checks them per count.
if _UNRANGED - {"deck_size", "players", "teams", "pots"}:  # pragma: no cover - no range given
    raise AssertionError(f"numeric rules without a range: {sorted(_UNRANGED)}")

OVERRIDABLE: Final = tuple(k for k in _KINDS if k != "name")


def _same_plain(a: object, b: object) -> bool:
    """Equal and of the same types all the way down (so `1` is not `True`, a list no tuple)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, list):
        assert isinstance(b, list)
        return len(a) == len(b) and all(_same_plain(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def _show(value: object) -> str:
    return str(_to_plain(value))


def _to_plain(value: object) -> Any:
    if isinstance(value, StrEnum):
        return value.value
    if isinstance(value, frozenset):
        return sorted(value)
    if isinstance(value, tuple):
        return [_to_plain(v) for v in value]
    return value


def _unknown_key(key: str) -> RuleOverrideError:
    close = difflib.get_close_matches(key, OVERRIDABLE, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return RuleOverrideError(
        f"unknown rule {key!r}{hint} (rules: {', '.join(OVERRIDABLE)})", key=key
    )


def _bad(key: str, value: object, expected: str) -> RuleOverrideError:
    return RuleOverrideError(
        f"bad value for rule {key!r}: {value!r} (expected {expected})", key=key, value=value
    )


def _coerce(key: str, value: object) -> Any:
    """Check and normalise an already-typed value (from code or from a peer's wire form)."""
    kind = _KINDS[key]
    if key == "vulnerable_from" and value == HALF_TARGET:
        return HALF_TARGET
    if kind is bool:
        if not isinstance(value, bool):
            raise _bad(key, value, "true or false")
        return value
    if kind is int:
        if not isinstance(value, int) or isinstance(value, bool):
            raise _bad(
                key, value, "an integer" + (" or half_target" if key == "vulnerable_from" else "")
            )
        return value
    if kind is str:
        if not isinstance(value, str):
            raise _bad(key, value, "text")
        return value
    if kind is frozenset:
        if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
            raise _bad(key, value, "a list of ranks")
        ranks = list(value)
        if not all(isinstance(x, int) and not isinstance(x, bool) for x in ranks):
            raise _bad(key, value, "a list of ranks 1 (ace), 3..13")
        return frozenset(ranks)
    if kind is tuple:
        if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
            raise _bad(key, value, "a list of [length, bonus] pairs")
        pairs = []
        for item in value:
            if (
                isinstance(item, (str, bytes))
                or not isinstance(item, Iterable)
                or len(pair := list(item)) != 2
                or not all(isinstance(x, int) and not isinstance(x, bool) for x in pair)
            ):
                raise _bad(key, value, "a list of [length, bonus] pairs")
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
    raise _bad(key, value, "one of " + ", ".join(m.value for m in enum))


def _parse_value(key: str, text: str) -> Any:
    """Parse the VALUE of a `--rule KEY=VALUE` override for this key."""
    kind = _KINDS[key]
    t = text.strip()
    low = t.lower()
    if kind is bool:
        if low in ("true", "yes", "on", "1"):
            return True
        if low in ("false", "no", "off", "0"):
            return False
        raise _bad(key, text, "true or false")
    if kind is int:
        if key == "vulnerable_from" and low == HALF_TARGET:
            return HALF_TARGET
        try:
            return int(t, 10)
        except ValueError:
            raise _bad(
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
                raise _bad(key, text, "ranks like A,J,Q,K or none")
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
                raise _bad(key, text, "LENGTH:BONUS pairs like 13:500,14:1000 or none") from None
        return tuple(pairs)
    return _coerce(key, low)


def parse_override(text: str) -> tuple[str, Any]:
    """Parse one `KEY=VALUE` (as given to `--rule`) into a key and a typed value."""
    key, sep, value = text.partition("=")
    key = key.strip().replace("-", "_")
    if not sep:
        raise RuleOverrideError(f"rule override must look like KEY=VALUE, not {text!r}", key=key)
    if key not in OVERRIDABLE:
        raise _unknown_key(key)
    return key, _parse_value(key, value)


def parse_overrides(texts: Iterable[str]) -> dict[str, Any]:
    """Parse several `KEY=VALUE` overrides; a key given twice is an error."""
    out: dict[str, Any] = {}
    for text in texts:
        key, value = parse_override(text)
        if key in out:
            raise RuleOverrideError(f"rule {key!r} given twice", key=key, value=value)
        out[key] = value
    return out


# ----- the presets -----

PRESETS: Final[Mapping[str, RuleSet]] = MappingProxyType(
    {
        "us": RuleSet(
            name="us",
            deck_size=104,
            set_ranks=FACE_SET_RANKS,
            wild_end=WildEnd.EITHER,
            points_joker=30,
            points_deuce=20,
            buraco_shape=BuracoShape.RUN_OR_SET,
            clean_run_length_bonus=(),
            initial_meld_min=50,
            initial_meld_min_vulnerable=75,
            vulnerable_from=1500,
            initial_meld_failed_step=15,
            going_out=GoingOut.CLEAN_BURACO,
            discard_wild_to_go_out=True,
            pot_unplayed=PotUnplayed.PENALTY,
            target_score=3000,
            discard_start=DiscardStart.FIRST_PLAYER_PEEK,
            may_discard_lone_taken_card=True,
            must_meld_top_discard=False,
            stock_out=StockOut.POT_BECOMES_STOCK,
            cut_22_bonus=100,
            play_direction=Direction.CLOCKWISE,
        ),
        "classic": RuleSet(
            name="classic",
            deck_size=108,
            set_ranks=FACE_SET_RANKS,
            wild_end=WildEnd.EITHER,
            points_joker=30,
            points_deuce=20,
            buraco_shape=BuracoShape.RUN_OR_SET,
            clean_run_length_bonus=(),
            initial_meld_min=50,
            initial_meld_min_vulnerable=75,
            vulnerable_from=1500,
            initial_meld_failed_step=15,
            going_out=GoingOut.CLEAN_BURACO,
            discard_wild_to_go_out=True,
            pot_unplayed=PotUnplayed.PENALTY,
            target_score=2000,
            discard_start=DiscardStart.FACE_UP,
            may_discard_lone_taken_card=True,
            must_meld_top_discard=False,
            stock_out=StockOut.POT_BECOMES_STOCK,
            cut_22_bonus=100,
            play_direction=Direction.CLOCKWISE,
        ),
        "playingcards": RuleSet(
            name="playingcards",
            deck_size=108,
            set_ranks=frozenset(),
            wild_end=WildEnd.EITHER,
            points_joker=20,
            points_deuce=10,
            buraco_shape=BuracoShape.RUN,
            clean_run_length_bonus=((13, 500), (14, 1000)),
            initial_meld_min=0,
            initial_meld_min_vulnerable=75,
            vulnerable_from=HALF_TARGET,
            initial_meld_failed_step=0,
            initial_meld_counts=OpeningCount.ONE_MELD,
            going_out=GoingOut.CLEAN_BURACO,
            discard_wild_to_go_out=True,
            pot_unplayed=PotUnplayed.PENALTY,
            target_score=3000,
            discard_start=DiscardStart.FIRST_PLAYER_PEEK,
            may_discard_lone_taken_card=True,
            must_meld_top_discard=False,
            stock_out=StockOut.POT_BECOMES_STOCK,
            cut_22_bonus=0,
            play_direction=Direction.COUNTER_CLOCKWISE,
        ),
        "italian": RuleSet(
            name="italian",
            deck_size=108,
            set_ranks=SET_RANKS_ALLOWED,
            wild_end=WildEnd.HIGH,
            points_joker=30,
            points_deuce=20,
            buraco_shape=BuracoShape.RUN_OR_SET,
            clean_run_length_bonus=(),
            initial_meld_min=0,
            initial_meld_min_vulnerable=0,
            vulnerable_from=HALF_TARGET,
            initial_meld_failed_step=0,
            going_out=GoingOut.ANY_BURACO,
            discard_wild_to_go_out=False,
            pot_unplayed=PotUnplayed.COUNT,
            go_out_by_discard_only=True,
            target_score=2000,
            discard_start=DiscardStart.FACE_UP,
            may_discard_lone_taken_card=False,
            must_meld_top_discard=False,
            stock_out=StockOut.HAND_ENDS,
            cut_22_bonus=0,
            play_direction=Direction.COUNTER_CLOCKWISE,
        ),
        "fechado": RuleSet(
            name="fechado",
            deck_size=108,
            set_ranks=SET_RANKS_ALLOWED,
            wild_end=WildEnd.EITHER,
            points_joker=50,
            points_deuce=10,
            buraco_shape=BuracoShape.RUN_OR_SET,
            clean_run_length_bonus=((13, 500), (14, 1000)),
            initial_meld_min=0,
            initial_meld_min_vulnerable=0,
            vulnerable_from=HALF_TARGET,
            initial_meld_failed_step=0,
            going_out=GoingOut.CLEAN_BURACO,
            discard_wild_to_go_out=True,
            pot_unplayed=PotUnplayed.PENALTY_AND_COUNT,
            pot_played_by_discard=False,
            set_suits_differ=True,
            target_score=3000,
            discard_start=DiscardStart.NONE,
            may_discard_lone_taken_card=True,
            must_meld_top_discard=True,
            stock_out=StockOut.POT_BECOMES_STOCK,
            cut_22_bonus=0,
            play_direction=Direction.CLOCKWISE,
        ),
    }
)


def get_preset(name: str) -> RuleSet:
    """The named preset; an unknown name is a RuleError listing the valid ones."""
    try:
        return PRESETS[name]
    except (KeyError, TypeError):
        raise RuleError(f"unknown rule preset {name!r} (presets: {', '.join(PRESETS)})") from None
