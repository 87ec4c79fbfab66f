"""`RuleSet`: one frozen value holding every rule on which the sources differ, with its wire
form, its digest and `KEY=VALUE` overrides.

The five sources disagree, so every point where they differ is a field here and each preset
(`buraco_p2p.rules.presets`) is just a set of values. Peers agree on the rules of a table by
comparing `digest()`, so the wire form is canonical and versioned. The pieces it is made of
live beside it: the choices and errors (`choices`), each field's value forms (`values`), the
ranges and what a player count implies (`ranges`); each name is exported by the module that
defines it (and the public ones by `buraco_p2p.rules`), never twice.
"""

from __future__ import annotations

import dataclasses
import difflib
import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal

import msgpack

from buraco_p2p.rules.choices import (
    HALF_TARGET,
    AceMode,
    BuracoShape,
    Direction,
    DiscardStart,
    DiscardTake,
    GoingOut,
    MeldKind,
    OpeningCount,
    PotUnplayed,
    RuleError,
    RuleOverrideError,
    StockOut,
    WildEnd,
)
from buraco_p2p.rules.ranges import (
    CUT_BONUS_SIZE,
    RANGES,
    follow_player_count,
    validate,
)
from buraco_p2p.rules.values import coerce, kind_of, parse, same_plain, to_plain

__all__ = ["OVERRIDABLE", "WIRE_VERSION", "RuleSet", "parse_override", "parse_overrides"]

WIRE_VERSION: Final = 1


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
        validate(self)
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
            parsed = _parse(key, value) if isinstance(value, str) else _coerce(key, value)
            changes[key] = parsed
        follow_player_count(self, changes)
        return dataclasses.replace(self, **changes)

    def to_wire(self) -> dict[str, Any]:
        """Plain msgpack-friendly form: str keys, and str/int/bool/list values only."""
        out: dict[str, Any] = {"v": WIRE_VERSION}
        for name in _KINDS:
            out[name] = to_plain(getattr(self, name))
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
        odd = [k for k in _KINDS if not same_plain(wire[k], data[k])]
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


def _face_point_table(r: RuleSet) -> tuple[int, ...]:
    by_rank = [0, r.points_ace, r.points_deuce]
    by_rank += [r.points_3_to_7] * 5 + [r.points_8_to_k] * 6
    return (*(by_rank[code % 13 + 1] for code in range(52)), r.points_joker)


def _field_kinds() -> dict[str, Any]:
    """How each public field is parsed and checked, in declaration order (the wire order)."""
    kinds: dict[str, Any] = {}
    for f in dataclasses.fields(RuleSet):
        if f.name.startswith("_"):
            continue
        kinds[f.name] = kind_of(f.name, f.type)
    return kinds


_KINDS: Final = _field_kinds()
_UNRANGED: Final = {k for k, kind in _KINDS.items() if kind is int} - set(RANGES)
# The values of these depend on the player count: `validate` checks them per count.
if _UNRANGED - {"deck_size", "players", "teams", "pots"}:  # pragma: no cover - no range given
    raise AssertionError(f"numeric rules without a range: {sorted(_UNRANGED)}")

OVERRIDABLE: Final = tuple(k for k in _KINDS if k != "name")


def _coerce(key: str, value: object) -> Any:
    return coerce(key, _KINDS[key], value)


def _parse(key: str, text: str) -> Any:
    return parse(key, _KINDS[key], text)


def _unknown_key(key: str) -> RuleOverrideError:
    close = difflib.get_close_matches(key, OVERRIDABLE, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return RuleOverrideError(
        f"unknown rule {key!r}{hint} (rules: {', '.join(OVERRIDABLE)})", key=key
    )


def parse_override(text: str) -> tuple[str, Any]:
    """Parse one `KEY=VALUE` (as given to `--rule`) into a key and a typed value."""
    key, sep, value = text.partition("=")
    key = key.strip().replace("-", "_")
    if not sep:
        raise RuleOverrideError(f"rule override must look like KEY=VALUE, not {text!r}", key=key)
    if key not in OVERRIDABLE:
        raise _unknown_key(key)
    return key, _parse(key, value)


def parse_overrides(texts: Iterable[str]) -> dict[str, Any]:
    """Parse several `KEY=VALUE` overrides; a key given twice is an error."""
    out: dict[str, Any] = {}
    for text in texts:
        key, value = parse_override(text)
        if key in out:
            raise RuleOverrideError(f"rule {key!r} given twice", key=key, value=value)
        out[key] = value
    return out

