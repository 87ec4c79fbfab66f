"""The engine's door to the rules layer: meld checks with memoisation.

The same few hundred card combinations are checked again and again (every view replays every
move, bots probe many candidates), so results are cached per rule set, keyed by face codes.
A cached rejection is replayed as the same `IllegalMove`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Final

from buraco_p2p.cards import FACES, Card
from buraco_p2p.engine.errors import IllegalMove, IllegalMoveCode
from buraco_p2p.engine.params import Params
from buraco_p2p.rules import End, IllegalMeld, Meld, MeldKind, RuleSet, evaluate_meld, extend_meld

Fail = Callable[[IllegalMoveCode, str], IllegalMove]

# Wild-end choice as carried in moves: 0 the rules' default, 1 the low end, 2 the high end.
WILD_END_CHOICES: Final[tuple[End | None, ...]] = (None, End.LOW, End.HIGH)
_CACHE_LIMIT: Final = 200_000


class MeldOracle:
    """Meld evaluation for one rule set, memoised."""

    def __init__(self, rules: RuleSet) -> None:
        self.rules = rules
        self.params = Params.of(rules)
        self.rules_digest = rules.digest()
        self._eval: dict[tuple[tuple[int, ...], int], Meld | IllegalMeld] = {}
        # Keyed by the meld's id (hashing a Meld walks all its faces); each entry keeps the
        # meld itself, so the id cannot be reused while the entry lives.
        self._ext: dict[tuple[int, tuple[int, ...], int], tuple[Meld, Meld | IllegalMeld]] = {}

    def evaluate(self, codes: tuple[int, ...], wild_end: int, fail: Fail) -> Meld:
        key = (codes, wild_end)
        r = self._eval.get(key)
        if r is None:
            try:
                r = evaluate_meld(
                    [FACES[c] for c in codes], self.rules, wild_end=WILD_END_CHOICES[wild_end]
                )
            except IllegalMeld as exc:
                r = exc
            if len(self._eval) > _CACHE_LIMIT:
                self._eval.clear()
            self._eval[key] = r
        if isinstance(r, IllegalMeld):
            raise fail(IllegalMoveCode.ILLEGAL_MELD, f"{_text(codes)}: {r.reason}")
        return r

    def extend(self, meld: Meld, codes: tuple[int, ...], wild_end: int, fail: Fail) -> Meld:
        key = (id(meld), codes, wild_end)
        hit = self._ext.get(key)
        r = hit[1] if hit is not None and hit[0] is meld else None
        if r is None:
            try:
                r = extend_meld(
                    meld,
                    [FACES[c] for c in codes],
                    self.rules,
                    wild_end=WILD_END_CHOICES[wild_end],
                )
            except IllegalMeld as exc:
                r = exc
            if len(self._ext) > _CACHE_LIMIT:
                self._ext.clear()
            self._ext[key] = (meld, r)
        if isinstance(r, IllegalMeld):
            raise fail(
                IllegalMoveCode.ILLEGAL_MELD, f"adding {_text(codes)} to {meld}: {r.reason}"
            )
        return r

    def try_evaluate(self, codes: tuple[int, ...], wild_end: int = 0) -> Meld | None:
        """`evaluate` for probing: None instead of an error (the generator's hot path)."""
        r = self._eval.get((codes, wild_end))
        if r is None:
            try:
                r = self.evaluate(codes, wild_end, _probe_fail)
            except IllegalMove:
                return None
        return None if isinstance(r, IllegalMeld) else r

    def try_extend(self, meld: Meld, codes: tuple[int, ...], wild_end: int = 0) -> Meld | None:
        hit = self._ext.get((id(meld), codes, wild_end))
        r = hit[1] if hit is not None and hit[0] is meld else None
        if r is None:
            try:
                r = self.extend(meld, codes, wild_end, _probe_fail)
            except IllegalMove:
                return None
        return None if isinstance(r, IllegalMeld) else r

    @staticmethod
    def set_rank(meld: Meld) -> int | None:
        return meld.rank if meld.kind is MeldKind.SET else None

    def going_out_ok(self, melds: Iterable[Meld]) -> bool:
        """Whether a team with these melds has the buraco its preset needs to go out."""
        need_clean = self.params.need_clean_buraco
        return any(m.is_buraco and (m.clean or not need_clean) for m in melds)

    @staticmethod
    def summary(meld: Meld) -> list[object]:
        """Plain data for hashing: what lies on the table and how."""
        return [
            meld.kind.value,
            [f.code for f in meld.faces],
            meld.start,
            -1 if meld.wild_index is None else meld.wild_index,
        ]


_PROBE_ERROR: Final = IllegalMove(IllegalMoveCode.ILLEGAL_MELD, "probe")


def _probe_fail(code: IllegalMoveCode, message: str) -> IllegalMove:
    return _PROBE_ERROR


def _text(codes: Iterable[int]) -> str:
    return " ".join(str(FACES[c]) for c in codes)


_ORACLES: dict[RuleSet, MeldOracle] = {}


def oracle_for(rules: RuleSet) -> MeldOracle:
    """The shared oracle of a rule set (every view of every hand under it shares the cache)."""
    o = _ORACLES.get(rules)
    if o is None:
        if len(_ORACLES) > 64:
            _ORACLES.clear()
        o = _ORACLES[rules] = MeldOracle(rules)
    return o


def face_code(card: Card) -> int:
    return card.code
