"""The engine's door to the rules layer: meld checks with memoisation.

The same few hundred card combinations are checked again and again (a view replays every move,
a bot probes many candidates from its hand), so results are cached, keyed by face codes. The
cache belongs to one view (and its copies): its keys are faces that view has looked at, its
own hidden cards among them, so a cache shared by the views of one process would let one
seat's view read another's hand. A cached rejection is replayed as the same `IllegalMove`.
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


MeldKey = tuple[int, int, tuple[int, ...]]


class MeldOracle:
    """Meld evaluation for one rule set, memoised."""

    def __init__(self, rules: RuleSet) -> None:
        self.rules = rules
        self.params = Params.of(rules)
        self.rules_digest = rules.digest()
        self._eval: dict[tuple[tuple[int, ...], int], Meld | IllegalMeld] = {}
        # Extensions are keyed by how the meld lies (start, wild index, face codes), so equal
        # melds of different hands share entries; `_keys` memoises that key per Meld object
        # (by id; each entry holds the meld, so the id is not reused while it lives).
        self._ext: dict[tuple[MeldKey, tuple[int, ...], int], Meld | IllegalMeld] = {}
        self._keys: dict[int, tuple[Meld, MeldKey]] = {}

    def meld_key(self, meld: Meld) -> MeldKey:
        hit = self._keys.get(id(meld))
        if hit is not None and hit[0] is meld:
            return hit[1]
        key = (
            meld.start,
            -1 if meld.wild_index is None else meld.wild_index,
            tuple(f.code for f in meld.faces),
        )
        if len(self._keys) > _CACHE_LIMIT:
            self._keys.clear()
        self._keys[id(meld)] = (meld, key)
        return key

    def _evaluate_raw(self, codes: tuple[int, ...], wild_end: int) -> Meld | IllegalMeld:
        key = (codes, wild_end)
        r = self._eval.get(key)
        if r is None:
            try:
                r = evaluate_meld(
                    [FACES[c] for c in codes], self.rules, wild_end=WILD_END_CHOICES[wild_end]
                )
            except IllegalMeld as exc:
                r = exc.with_traceback(None)  # no frames kept alive by the cache
            if len(self._eval) > _CACHE_LIMIT:
                self._eval.clear()
            self._eval[key] = r
        return r

    def _extend_raw(self, meld: Meld, codes: tuple[int, ...], wild_end: int) -> Meld | IllegalMeld:
        key = (self.meld_key(meld), codes, wild_end)
        r = self._ext.get(key)
        if r is None:
            try:
                r = extend_meld(
                    meld,
                    [FACES[c] for c in codes],
                    self.rules,
                    wild_end=WILD_END_CHOICES[wild_end],
                )
            except IllegalMeld as exc:
                r = exc.with_traceback(None)  # no frames kept alive by the cache
            if len(self._ext) > _CACHE_LIMIT:
                self._ext.clear()
            self._ext[key] = r
        return r

    def evaluate(self, codes: tuple[int, ...], wild_end: int, fail: Fail) -> Meld:
        """The meld these faces form, or `fail(ILLEGAL_MELD, reason)` raised."""
        r = self._evaluate_raw(codes, wild_end)
        if isinstance(r, IllegalMeld):
            raise fail(IllegalMoveCode.ILLEGAL_MELD, f"{_text(codes)}: {r.reason}")
        return r

    def extend(self, meld: Meld, codes: tuple[int, ...], wild_end: int, fail: Fail) -> Meld:
        r = self._extend_raw(meld, codes, wild_end)
        if isinstance(r, IllegalMeld):
            raise fail(
                IllegalMoveCode.ILLEGAL_MELD, f"adding {_text(codes)} to {meld}: {r.reason}"
            )
        return r

    def try_evaluate(self, codes: tuple[int, ...], wild_end: int = 0) -> Meld | None:
        """`evaluate` for probing: None instead of an error (the generator's hot path)."""
        r = self._evaluate_raw(codes, wild_end)
        return None if isinstance(r, IllegalMeld) else r

    def try_extend(self, meld: Meld, codes: tuple[int, ...], wild_end: int = 0) -> Meld | None:
        r = self._extend_raw(meld, codes, wild_end)
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


def _text(codes: Iterable[int]) -> str:
    return " ".join(str(FACES[c]) for c in codes)


def face_code(card: Card) -> int:
    return card.code
