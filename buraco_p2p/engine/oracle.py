"""The engine's door to the rules layer: meld checks with memoisation.

The same few hundred card combinations are checked again and again (every view replays every
move, a bot probes many candidates from its hand), so results are cached, keyed by face codes.
A meld check is a pure function of the rules and the faces; what a cache can give away is its
keys, the faces someone looked at. So there are two caches:

- the *public* one (`PublicMelds`), shared by every view of a rule set in the process, holds
  only the checks `push` makes of a move's melds (`evaluate`, `extend`, the fechado
  justification) when every card checked is public in that view: the cards a move exposes,
  which a session reveals publicly to the whole table before pushing it. So its keys are
  public data, and one table's seven views at six players check a meld about once, not
  seven times. A move checked on a copy (`check`, a bot's simulation) names cards that are
  not public yet: those checks stay private.
- the *private* one belongs to one view (and its copies): a bot's probes of its own hidden
  cards (`try_evaluate`, `try_extend`) are written there only, so no view can read another
  seat's hand from a cache. A probe may read the public cache (a pure result, found by a key
  the prober already holds), never write it.

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


MeldKey = tuple[int, int, tuple[int, ...]]
EvalKey = tuple[tuple[int, ...], int]
ExtKey = tuple[MeldKey, tuple[int, ...], int]
Result = Meld | IllegalMeld


class MeldCache:
    """Meld checks memoised, keyed by face codes (bounded: cleared when full)."""

    def __init__(self) -> None:
        self.eval: dict[EvalKey, Result] = {}
        # Extensions are keyed by how the meld lies (start, wild index, face codes), so equal
        # melds of different hands share entries; `keys` memoises that key per Meld object
        # (by id; each entry holds the meld, so the id is not reused while it lives).
        self.ext: dict[ExtKey, Result] = {}
        self.keys: dict[int, tuple[Meld, MeldKey]] = {}

    def meld_key(self, meld: Meld) -> MeldKey:
        hit = self.keys.get(id(meld))
        if hit is not None and hit[0] is meld:
            return hit[1]
        key = (
            meld.start,
            -1 if meld.wild_index is None else meld.wild_index,
            tuple(f.code for f in meld.faces),
        )
        if len(self.keys) > _CACHE_LIMIT:
            self.keys.clear()
        self.keys[id(meld)] = (meld, key)
        return key

    def put_eval(self, key: EvalKey, r: Result) -> None:
        if len(self.eval) > _CACHE_LIMIT:
            self.eval.clear()
        self.eval[key] = r

    def put_ext(self, key: ExtKey, r: Result) -> None:
        if len(self.ext) > _CACHE_LIMIT:
            self.ext.clear()
        self.ext[key] = r


class PublicMelds(MeldCache):
    """The checks of faces a move exposed to its whole table: shared by every view of one rule
    set in the process (see the module docstring for why its keys give nothing away)."""


_PUBLIC: dict[bytes, PublicMelds] = {}


def public_melds(rules: RuleSet, digest: bytes | None = None) -> PublicMelds:
    """The process's public meld cache for `rules` (one per rule-set `digest`)."""
    if digest is None:
        digest = rules.digest()
    cache = _PUBLIC.get(digest)
    if cache is None:
        if len(_PUBLIC) > 64:
            _PUBLIC.clear()
        cache = _PUBLIC[digest] = PublicMelds()
    return cache


def clear_public_melds() -> None:
    """Forget every public meld check (a benchmark's cold start)."""
    _PUBLIC.clear()


class MeldOracle:
    """Meld evaluation for one rule set, memoised: a private cache of this view's own, the
    public one shared (see the module docstring)."""

    def __init__(self, rules: RuleSet) -> None:
        self.rules = rules
        self.params = Params.of(rules)
        self.rules_digest = rules.digest()
        self._private = MeldCache()
        self._public = public_melds(rules, self.rules_digest)

    # The private cache's tables, as tests and tools look at them.
    @property
    def _eval(self) -> dict[EvalKey, Result]:
        return self._private.eval

    @property
    def _ext(self) -> dict[ExtKey, Result]:
        return self._private.ext

    @property
    def _keys(self) -> dict[int, tuple[Meld, MeldKey]]:
        return self._private.keys

    def __getstate__(self) -> dict[str, object]:
        # A copy or an unpickled view joins its own process's public cache, not a copy of it.
        state = dict(self.__dict__)
        del state["_public"]
        return state

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__dict__.update(state)
        self._public = public_melds(self.rules, self.rules_digest)

    def meld_key(self, meld: Meld) -> MeldKey:
        return self._private.meld_key(meld)

    def _evaluate_raw(
        self, codes: tuple[int, ...], wild_end: int, public: bool = False
    ) -> Result:
        key = (codes, wild_end)
        shared = self._public
        r = shared.eval.get(key)
        if r is not None:
            return r
        mine = self._private
        if not public:
            r = mine.eval.get(key)
            if r is not None:
                return r
        try:
            r = evaluate_meld(
                [FACES[c] for c in codes], self.rules, wild_end=WILD_END_CHOICES[wild_end]
            )
        except IllegalMeld as exc:
            r = exc.with_traceback(None)  # no frames kept alive by the cache
        (shared if public else mine).put_eval(key, r)
        return r

    def _extend_raw(
        self, meld: Meld, codes: tuple[int, ...], wild_end: int, public: bool = False
    ) -> Result:
        shared = self._public
        mine = self._private
        # A table meld lies in public, so its key may be memoised in the public cache.
        key = ((shared if public else mine).meld_key(meld), codes, wild_end)
        r = shared.ext.get(key)
        if r is not None:
            return r
        if not public:
            r = mine.ext.get(key)
            if r is not None:
                return r
        try:
            r = extend_meld(
                meld,
                [FACES[c] for c in codes],
                self.rules,
                wild_end=WILD_END_CHOICES[wild_end],
            )
        except IllegalMeld as exc:
            r = exc.with_traceback(None)  # no frames kept alive by the cache
        (shared if public else mine).put_ext(key, r)
        return r

    def evaluate(
        self, codes: tuple[int, ...], wild_end: int, fail: Fail, public: bool = False
    ) -> Meld:
        """The meld these faces form, or `fail(ILLEGAL_MELD, reason)` raised. `public=True`
        only where every face has been shown to the whole table (memoised in the public
        cache)."""
        r = self._evaluate_raw(codes, wild_end, public)
        if isinstance(r, IllegalMeld):
            raise fail(IllegalMoveCode.ILLEGAL_MELD, f"{_text(codes)}: {r.reason}")
        return r

    def extend(
        self, meld: Meld, codes: tuple[int, ...], wild_end: int, fail: Fail, public: bool = False
    ) -> Meld:
        """`evaluate` for cards added to a table meld (`public` likewise)."""
        r = self._extend_raw(meld, codes, wild_end, public)
        if isinstance(r, IllegalMeld):
            raise fail(
                IllegalMoveCode.ILLEGAL_MELD, f"adding {_text(codes)} to {meld}: {r.reason}"
            )
        return r

    def try_evaluate(
        self, codes: tuple[int, ...], wild_end: int = 0, public: bool = False
    ) -> Meld | None:
        """`evaluate` for probing: None instead of an error (the generator's hot path).
        `public=True` only where the faces have been shown to the whole table."""
        r = self._evaluate_raw(codes, wild_end, public)
        return None if isinstance(r, IllegalMeld) else r

    def try_extend(
        self, meld: Meld, codes: tuple[int, ...], wild_end: int = 0, public: bool = False
    ) -> Meld | None:
        r = self._extend_raw(meld, codes, wild_end, public)
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
