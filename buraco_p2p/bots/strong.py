"""The strong level: the normal player's choices, tried on sampled deals.

Perfect-information Monte Carlo, as Skat and bridge programs play: at a decision with a real
choice, the normal level proposes candidate moves (`candidates`); the hidden cards are dealt
at random consistently with what this seat knows (`sampler.Sampler`), and on each deal every
candidate is played out by the normal level at every seat (`rollout.playout`) and scored by
how the hand stands for this side against the best other side. The candidate with the best
total wins, the normal level's own choice on a tie. The same deals and the same random choices
in the playouts serve every candidate, so the comparison measures the moves and not the luck
of the deal.

The search pays where the normal level's rules of thumb are weakest. The draw: the pile or the
stock decides what a side can meld for the rest of the hand, so every draw where taking the
pile would put a card of it down that turn is searched (elsewhere the normal level's draw
stands), its playouts `horizon` turns long (`heads_up_horizon` heads up). The discard:
which card feeds the next player, and which the side keeps, is where a fixed weighting
misjudges most, so the normal level's discard is weighed against its `discards` next cheapest
(one per face), over `discard_horizon` turns, long enough to see who takes the pile (measured
at four seats, us rules, over the same 300 hands: with the discards searched, the strong
level's hand win rate against the normal level rose from 0.55 to 0.65). And going out or not.
Melds follow the normal level.

The search stops at `samples` deals (with a budget, `MAX_SAMPLES`) or when `think` seconds of
the clock are spent, whichever comes first. With `think=None` it is a pure function of the view
and the random source (the scores are integers, so the sums do not depend on how the deals were
split), and seeded self-play repeats; with a budget the number of deals follows the machine's
speed. With `workers` above one, deals are shared among that many processes (this one
included), each taking every `workers`-th deal.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import random
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from typing import Final

from buraco_p2p.bots.base import NoMoveError
from buraco_p2p.bots.normal import NONE, NORMAL, NormalBot, Style, pile_goes_down, shown_cost
from buraco_p2p.bots.rollout import playout
from buraco_p2p.bots.sampler import Sampler
from buraco_p2p.engine import (
    AddToMeld,
    Discard,
    DrawStock,
    HandState,
    LayDown,
    Move,
    Phase,
    TakeDiscard,
    legal_moves,
)
from buraco_p2p.engine.hand import GO_OUT

DEFAULT_THINK: Final = 1.0  # seconds per move, `--bot-think`
# The priority the search's worker processes run at, at least: below a person's own client
# (the full-screen table beside them), whichever process started them.
WORKER_NICE: Final = 10
# Deals per searched move without a time budget: the benchmark's fixed size and seeded
# self-play's (at most what the default budget reaches on a two-core machine).
DEFAULT_SAMPLES: Final = 12
# Turns a playout after a draw runs before the position is estimated (None: to the end of the
# hand). Heads up (`heads_up_horizon`) they run longer: cut at 8 turns the estimate misjudged
# the hand (measured: the search lost to the normal level), while 16 turns won as often as
# playing to the end (hand win rates 0.71 and 0.72, the same 120 hands) at two thirds the cost.
DEFAULT_HORIZON: Final = 8
DEFAULT_HEADS_UP_HORIZON: Final = 16
# Discards weighed beside the normal level's own (the next cheapest by its reckoning, one per
# face), and the turns their playouts run: a discard's fate is mostly decided within a round.
DEFAULT_DISCARDS: Final = 2
DEFAULT_DISCARD_HORIZON: Final = 4
# The most deals a search with a time budget plays, the budget stopping it sooner on a slow or
# busy machine: past a few dozen deals the choice hardly moves (measured on 80 searched
# positions against 80 further deals each: 12, 24 and 40 deals chose equally well), and a
# bot that has its answer need not keep a person waiting for the rest of its second.
MAX_SAMPLES: Final = 48
# The search stops this long before its budget: the answer and the slowest playout's margin.
SAFETY: Final = 0.1


@dataclass(frozen=True, slots=True)
class Thought:
    """What the last search did: deals played, seconds spent, each candidate's mean score."""

    samples: int = 0
    seconds: float = 0.0
    scores: tuple[tuple[Move, float], ...] = ()


def cores() -> int:
    """The processors this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - platforms without affinity
        return os.cpu_count() or 1


class StrongBot:
    """Searches over sampled deals with the normal level as its playout policy."""

    name = "strong"

    def __init__(
        self,
        think: float | None = DEFAULT_THINK,
        samples: int | None = None,
        horizon: int | None = DEFAULT_HORIZON,
        heads_up_horizon: int | None = DEFAULT_HEADS_UP_HORIZON,
        clock: Callable[[], float] = time.monotonic,
        style: Style = NORMAL,
        workers: int = 1,
        discards: int = DEFAULT_DISCARDS,
        discard_horizon: int | None = DEFAULT_DISCARD_HORIZON,
    ) -> None:
        self.think = think
        # Without a budget, a fixed number of deals; with one, as many as it allows.
        self.samples = samples or (DEFAULT_SAMPLES if think is None else MAX_SAMPLES)
        self.horizon = horizon
        self.heads_up_horizon = heads_up_horizon
        self.clock = clock
        self.style = style
        self.policy = NormalBot(style)
        self.workers = max(1, workers)
        self.discards = discards
        self.discard_horizon = discard_horizon
        self.last = Thought()
        self._pool: ProcessPoolExecutor | None = None
        if self.workers > 1 and think is not None:
            self._workers()  # started now: a first move's budget is not a process's start

    def choose_move(self, view: HandState, rng: random.Random) -> Move:
        start = self.clock()
        self.last = Thought()
        moves = legal_moves(view)
        if not moves:
            raise NoMoveError(f"player {view.turn} has no legal move (phase {view.phase.value})")
        first = self.policy.choose_move(view, rng) if len(moves) > 1 else moves[0]
        cands = self.candidates(view, moves, first)
        if len(cands) == 1:
            return first
        seed = rng.getrandbits(64)
        deadline = None if self.think is None else start + self.think - SAFETY
        if isinstance(first, Discard):
            horizon = self.discard_horizon
        else:
            horizon = self.horizon if view.players > 2 else self.heads_up_horizon
        task = (view, cands, seed, self.workers, self.samples, deadline, horizon, self.style)
        parts: list[Future[tuple[list[int], int]]] = []
        if self.workers > 1:
            pool = self._workers()
            # pickled here: the pool's feeder thread would read the view while the search
            # below fills its meld cache
            blob = pickle.dumps(task)
            parts = [pool.submit(_search_blob, k, blob) for k in range(1, self.workers)]
        totals, done = search_part(0, *task, self.policy, self.clock)
        for f in parts:
            more, n = f.result()
            totals = [a + b for a, b in zip(totals, more, strict=True)]
            done += n
        self.last = Thought(
            done,
            self.clock() - start,
            tuple((c, t / done) for c, t in zip(cands, totals, strict=True)) if done else (),
        )
        if not done:
            return first
        return cands[max(range(len(cands)), key=lambda i: (totals[i], -i))]

    def candidates(self, view: HandState, moves: list[Move], first: Move) -> list[Move]:
        """The moves worth searching, the normal level's choice first: at a draw the stock
        and the pile (the justification that shows least, under fechado); in the play, a
        move that goes out and the best that does not, and at a discard the next cheapest
        discards. Elsewhere the normal level's alone."""
        if len(moves) == 1:
            return [first]
        if view.phase is Phase.DRAW:
            takes = [m for m in moves if isinstance(m, TakeDiscard)]
            stock = [m for m in moves if isinstance(m, DrawStock)]
            if not takes or not stock or pile_goes_down(view, view.turn) == NONE:
                return [first]  # no pile that puts a card down this turn: no hoarding
            return _distinct([first, min(takes, key=lambda m: shown_cost(view, m)), *stock])
        if view.phase is not Phase.PLAY or view.must_meld >= 0:
            return [first]
        cands = _distinct([first, *self._going_out(view, moves, first)])
        if isinstance(first, Discard):
            cands += self._discards(view, moves, first)
        return cands

    def _discards(self, view: HandState, moves: list[Move], first: Discard) -> list[Move]:
        """The `discards` cheapest discards by the normal level's reckoning after its own,
        one per face (two copies of a card are the same discard)."""
        face = view.codes
        known = view.known
        out: list[Move] = []
        faces = {face[known[first.slot]]}
        tie = random.Random(0)
        for _, mv in sorted(self.policy.discard_costs(view, moves, tie), key=lambda x: x[0]):
            if len(out) == self.discards:
                break
            code = face[known[mv.slot]]
            if code not in faces:
                faces.add(code)
                out.append(mv)
        return out

    def _going_out(self, view: HandState, moves: list[Move], first: Move) -> list[Move]:
        """Where the normal level's move would go out, or could, the other way too: its
        judgement of being ahead is the part of the play the playouts see better."""
        seat = view.turn
        out = _goes_out(view, first, seat)
        tie = random.Random(0)
        for score, mv in sorted(self.policy.meld_scores(view, moves, tie), key=lambda x: -x[0]):
            if _goes_out(view, mv, seat) != out and (out or abs(score) >= GO_OUT_SCORE):
                return [mv]
        if out:
            costs = self.policy.discard_costs(view, moves, tie)
            if costs:
                return [min(costs, key=lambda x: x[0])[1]]
        return []

    def _workers(self) -> ProcessPoolExecutor:
        if self._pool is None:
            # a clean server process forks the workers: the bot peer runs an event loop and
            # threads, which a fork of it would copy mid-flight
            ctx = multiprocessing.get_context("forkserver")
            ctx.set_forkserver_preload([__name__])
            self._pool = ProcessPoolExecutor(
                self.workers - 1, mp_context=ctx, initializer=_lower_priority
            )
            for _ in range(self.workers - 1):
                self._pool.submit(_ready)
        return self._pool

    def close(self) -> None:
        """Stop the worker processes (they stop with this process too)."""
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=True)
            self._pool = None


GO_OUT_SCORE: Final = 1_000  # a meld score this large is the normal level's going-out verdict


def _goes_out(view: HandState, move: Move, seat: int) -> bool:
    """Whether `move` empties the hand by going out, or leaves one card to go out with."""
    hand = len(view.hands[seat])
    if isinstance(move, Discard):
        return hand == 1
    if isinstance(move, LayDown):
        used = sum(len(x) for x in move.melds)
    elif isinstance(move, AddToMeld):
        used = len(move.slots)
    else:
        return False
    if used < hand - 1:
        return False
    after = view.copy()
    after.push(move)
    return after.ended or (
        len(after.hands[seat]) == 1 and after.emptying_outcome(seat, None) == GO_OUT
    )


def search_part(
    first: int,
    view: HandState,
    cands: Sequence[Move],
    seed: int,
    step: int,
    samples: int,
    deadline: float | None,
    horizon: int | None,
    style: Style,
    policy: NormalBot | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> tuple[list[int], int]:
    """Deals `first`, `first + step`, ... below `samples`, each candidate played out on
    each, until `deadline` (of `clock`): the candidates' total scores and the deals done.
    A deal counts only once every candidate has been played out on it."""
    policy = policy if policy is not None else NormalBot(style)
    sampler = Sampler(view)
    seat = view.turn
    totals = [0] * len(cands)
    done = 0
    for i in range(first, samples, step):
        deal = sampler.deal(random.Random(seed + 2 * i))
        scores: list[int] = []
        for c in cands:
            if deadline is not None and clock() > deadline:
                return totals, done
            scores.append(playout(deal, c, seat, policy, random.Random(seed + 2 * i + 1), horizon))
        for k, x in enumerate(scores):
            totals[k] += x
        done += 1
    return totals, done


def _ready() -> None:
    """A task that only makes the pool start its worker processes."""


def _lower_priority() -> None:
    """Run this worker at `WORKER_NICE` or lower: the deals it plays are spare work, and a
    person's client on the same processors comes first."""
    try:
        now = os.getpriority(os.PRIO_PROCESS, 0)
        os.setpriority(os.PRIO_PROCESS, 0, max(now, WORKER_NICE))
    except OSError:  # pragma: no cover - a system that refuses: the search runs as it is
        pass


def _search_blob(first: int, blob: bytes) -> tuple[list[int], int]:
    """`search_part` in a worker process, its arguments pickled by the searching one."""
    view, cands, seed, step, samples, deadline, horizon, style = pickle.loads(blob)
    return search_part(first, view, cands, seed, step, samples, deadline, horizon, style)


def _distinct(moves: list[Move]) -> list[Move]:
    out: list[Move] = []
    for m in moves:
        if m not in out:
            out.append(m)
    return out
