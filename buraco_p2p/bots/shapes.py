"""Cards and melds reduced to small ints, for the quick checks a player makes many times a move.

Face codes as the engine has them: suit * 13 + rank - 1 for the 52 naturals (an ace is rank 1,
also 14 at the top of a run), 52 for a joker; the deuces and the joker are wild. These checks
are close approximations of the rules, used to score a card, never to decide legality: every
move a player makes comes from `legal_moves`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Final

from buraco_p2p.rules import Meld, MeldKind

JOKER_CODE: Final = 52


def is_wild(code: int) -> bool:
    return code == JOKER_CODE or code % 13 == 1


def rank_of(code: int) -> int:
    """1..13 (an ace is 1); a joker is 53 % 13 + 1 = 1 like an ace, so test `is_wild` first."""
    return code % 13 + 1


class MeldShape:
    """A table meld reduced to the ints a single-card fit check needs."""

    __slots__ = ("clean", "hi", "is_set", "lo", "rank", "size", "suit", "wild_pos")

    def __init__(self, m: Meld) -> None:
        self.is_set = m.kind is MeldKind.SET
        self.rank = m.rank or 0
        self.suit = -1 if m.suit is None else int(m.suit)
        self.size = len(m.faces)
        self.lo = m.start
        self.hi = m.start + self.size - 1
        self.wild_pos = -1 if m.wild_index is None else m.start + m.wild_index
        self.clean = m.wild_index is None

    def fits(self, code: int) -> bool:
        """Whether one card could be added."""
        if is_wild(code):
            if self.is_set:
                return self.clean
            return self.clean and self.size < 14 and (self.lo > 1 or self.hi < 14)
        rank = code % 13 + 1
        if self.is_set:
            return rank == self.rank
        if code // 13 != self.suit:
            return False
        for p in (1, 14) if rank == 1 else (rank,):
            if p == self.lo - 1 or p == self.hi + 1 or p == self.wild_pos:
                return True
        return False


def shapes(melds: Iterable[object]) -> list[MeldShape]:
    """The shapes of a side's table melds (`TableMeld`s, whose `.meld` is the meld)."""
    return [MeldShape(tm.meld) for tm in melds]  # type: ignore[attr-defined]


def fits_any(code: int, table: Sequence[MeldShape]) -> bool:
    return any(sh.fits(code) for sh in table)


class HandCounts:
    """Counts over the naturals of a set of cards, for run and set potential."""

    __slots__ = ("by_rank", "by_suit", "wilds")

    def __init__(self, codes: Iterable[int]) -> None:
        self.by_suit: list[set[int]] = [set(), set(), set(), set()]
        self.by_rank: list[int] = [0] * 14
        self.wilds = 0
        for c in codes:
            if is_wild(c):
                self.wilds += 1
                continue
            r = c % 13 + 1
            s = self.by_suit[c // 13]
            s.add(r)
            if r == 1:
                s.add(14)
            self.by_rank[r] += 1

    def run_links(self, code: int) -> tuple[int, int]:
        """Distinct same-suit ranks at distance one and at distance two from `code`."""
        r = code % 13 + 1
        s = self.by_suit[code // 13]
        near = far = 0
        for p in (1, 14) if r == 1 else (r,):
            for d in (-1, 1):
                if 1 <= p + d <= 14 and (p + d) in s:
                    near += 1
                if 1 <= p + 2 * d <= 14 and (p + 2 * d) in s:
                    far += 1
        return near, far

    def completes_meld(self, code: int, set_ok: bool) -> bool:
        """Whether `code` with two cards counted here forms a legal-looking three-card meld."""
        if is_wild(code):
            return any(len(s) >= 2 and _has_pair_window(s) for s in self.by_suit)
        near, far = self.run_links(code)
        r = code % 13 + 1
        s = self.by_suit[code // 13]
        for p in (1, 14) if r == 1 else (r,):
            # Two naturals around p forming a window of three: (p-2,p-1), (p-1,p+1), (p+1,p+2).
            if (p - 1 in s and (p - 2 in s or p + 1 in s)) or (p + 1 in s and p + 2 in s):
                return True
        if self.wilds and (near or far):
            return True
        if set_ok and self.by_rank[r] >= 2:
            return True
        return set_ok and self.by_rank[r] >= 1 and self.wilds > 0


def _has_pair_window(s: set[int]) -> bool:
    return any(p + 1 in s or p + 2 in s for p in s)


def progress(m: Meld, clean_steps: Sequence[int], dirty_steps: Sequence[int]) -> int:
    """What a meld of fewer than seven cards is worth on its way to a buraco."""
    n = len(m.faces)
    if n >= 7:
        return 0
    return clean_steps[n] if m.wild_index is None else dirty_steps[n]
