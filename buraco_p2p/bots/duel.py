"""Two players measured against each other over duplicate hands, for the bot benchmark.

A single hand of Buraco is mostly luck, so each deal is played twice with the two players
swapping sides (duplicate, as bridge is scored): a player's edge shows in the difference
between the two playings of the same cards. The figures are means over deals with a 95%
confidence interval over deals (the two playings of one deal are not independent, the deals
are), so the interval is honest about the pairing.

Everything is drawn from the seed: the deals, the dealers, the cuts and one random source per
seat, so a run repeats move for move (a searching player must search by sample count, not by
the clock, for that).
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from buraco_p2p.bots.base import Bot
from buraco_p2p.engine import (
    AddToMeld,
    Discard,
    HandSetup,
    HandState,
    LayDown,
    LocalTable,
    Move,
    TakeDiscard,
    match_sides,
    random_permutation,
)
from buraco_p2p.rules import RuleSet

# How many of the taker's own turns (the take's included) a pile take has to put cards down.
PILE_TURNS = 2


@dataclass(slots=True)
class PileTakes:
    """Pile takes by one player, and how many were not followed by cards laid down or added
    within `PILE_TURNS` of that player's turns: the mark of a hoarder."""

    takes: int = 0
    without_meld: int = 0

    def add(self, other: PileTakes) -> None:
        self.takes += other.takes
        self.without_meld += other.without_meld

    @property
    def rate(self) -> float:
        return self.without_meld / self.takes if self.takes else 0.0


@dataclass(slots=True)
class HandPlay:
    """One playing of a deal: each side's score (index 0: player A's side) and the details."""

    scores: tuple[int, int]
    piles: tuple[PileTakes, PileTakes]
    move_seconds: tuple[list[float], list[float]]


@dataclass(slots=True)
class DuelResult:
    """Per deal, the two playings (A on the first side, then on the second)."""

    plays: list[tuple[HandPlay, HandPlay]] = field(default_factory=list)

    @property
    def hands(self) -> int:
        return 2 * len(self.plays)

    def win_rate(self) -> tuple[float, float, float]:
        """A's hand win rate (a tie is half a win), with its 95% interval over deals."""
        return mean_ci([sum(_win(p) for p in pair) / 2 for pair in self.plays])

    def point_difference(self) -> tuple[float, float, float]:
        """A's mean points per hand minus B's, with its 95% interval over deals."""
        return mean_ci([sum(p.scores[0] - p.scores[1] for p in pair) / 2 for pair in self.plays])

    def piles(self, side: int) -> PileTakes:
        out = PileTakes()
        for pair in self.plays:
            for p in pair:
                out.add(p.piles[side])
        return out

    def move_seconds(self, side: int) -> list[float]:
        return [t for pair in self.plays for p in pair for t in p.move_seconds[side]]


def _win(p: HandPlay) -> float:
    a, b = p.scores
    return 1.0 if a > b else 0.5 if a == b else 0.0


def mean_ci(xs: Sequence[float]) -> tuple[float, float, float]:
    """The mean and its 95% interval (normal approximation; the samples here number hundreds)."""
    n = len(xs)
    if n == 0:
        return (math.nan, math.nan, math.nan)
    m = sum(xs) / n
    if n == 1:
        return (m, math.nan, math.nan)
    var = sum((x - m) ** 2 for x in xs) / (n - 1)
    half = 1.96 * math.sqrt(var / n)
    return (m, m - half, m + half)


def side_seats(rules: RuleSet) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The seats of the two players' sides: alternate seats, so at four and six the teams
    (of two teams at six) and at two each player. Three seats cannot be split in two."""
    n = rules.players
    if n == 3 or (n == 6 and rules.teams != 2):
        raise ValueError(f"a duel needs two sides, not the sides of {n} seats")
    return tuple(range(0, n, 2)), tuple(range(1, n, 2))


def play_duel(
    rules: RuleSet,
    make_a: Callable[[], Bot],
    make_b: Callable[[], Bot],
    deals: int,
    seed: int,
    clock: Callable[[], float] = time.perf_counter,
) -> DuelResult:
    """`deals` deals from `seed`, each played with A on one side and B on the other, then
    swapped. Each playing gets fresh players (a player may keep state within a hand)."""
    out = DuelResult()
    for d in range(deals):
        out.plays.append(play_deal(rules, make_a, make_b, seed, d, clock))
    return out


def play_deal(
    rules: RuleSet,
    make_a: Callable[[], Bot],
    make_b: Callable[[], Bot],
    seed: int,
    deal: int,
    clock: Callable[[], float] = time.perf_counter,
) -> tuple[HandPlay, HandPlay]:
    """Deal number `deal` of the run `seed`, played both ways round."""
    rng = random.Random(f"duel/{seed}/{deal}")
    cut = rng.randint(1, rules.deck_size - 1) if rules.cut_22_bonus else None
    dealer = rng.randrange(rules.players)
    perm = random_permutation(rules, rng)
    seat_seed = rng.getrandbits(64)
    first, second = side_seats(rules)
    setup = HandSetup(rules, dealer, (0,) * match_sides(rules), cut, 0)
    return (
        play_once(setup, perm, (first, second), make_a, make_b, seat_seed, clock),
        play_once(setup, perm, (second, first), make_a, make_b, seat_seed, clock),
    )


def play_once(
    setup: HandSetup,
    perm: Sequence[int],
    seats: tuple[tuple[int, ...], tuple[int, ...]],
    make_a: Callable[[], Bot],
    make_b: Callable[[], Bot],
    seat_seed: int,
    clock: Callable[[], float],
) -> HandPlay:
    """One hand: A's players at `seats[0]`, B's at `seats[1]`, each seeing only its view."""
    n = setup.rules.players
    bots: list[Bot | None] = [None] * n
    owner = [0] * n
    for side, make in enumerate((make_a, make_b)):
        for s in seats[side]:
            bots[s] = make()
            owner[s] = side
    rngs = [random.Random(seat_seed + s) for s in range(n)]
    table = LocalTable(setup, perm)
    ref = table.referee
    piles = (PileTakes(), PileTakes())
    times: tuple[list[float], list[float]] = ([], [])
    # seat -> own turns left to lay something down after a pile take (0: none pending)
    pending = [0] * n
    while not table.ended:
        seat = ref.turn
        bot = bots[seat]
        assert bot is not None
        t0 = clock()
        move = bot.choose_move(table.views[seat], rngs[seat])
        times[owner[seat]].append(clock() - t0)
        _track_pile(ref, move, seat, pending, piles[owner[seat]])
        table.push(move)
    for bot in bots:
        close = getattr(bot, "close", None)
        if close is not None:
            close()
    result = table.result()
    side_a = result.side_of(seats[0][0])
    side_b = result.side_of(seats[1][0])
    totals = result.totals
    for seat in range(n):
        if pending[seat]:
            piles[owner[seat]].without_meld += 1
    return HandPlay((totals[side_a], totals[side_b]), piles, times)


def _track_pile(
    ref: HandState, move: Move, seat: int, pending: list[int], piles: PileTakes
) -> None:
    """Count a take, clear it when the taker puts cards down (a lay-down that reaches the
    table, or an addition), and count it as hoarded once its turns run out."""
    if isinstance(move, TakeDiscard):
        if pending[seat]:
            piles.without_meld += 1  # a second take before the first was used
        piles.takes += 1
        pending[seat] = PILE_TURNS
    elif isinstance(move, AddToMeld) or (isinstance(move, LayDown) and _reaches_table(ref, move)):
        pending[seat] = 0
    elif isinstance(move, Discard) and pending[seat]:
        pending[seat] -= 1
        if not pending[seat]:
            piles.without_meld += 1


def _reaches_table(ref: HandState, move: LayDown) -> bool:
    """Whether a lay-down puts its melds on the table (not a failed or partial opening)."""
    after = ref.copy()
    team = after.seat_side[move.seat]
    before = len(after.melds[team])
    after.push(move)
    return len(after.melds[team]) > before
