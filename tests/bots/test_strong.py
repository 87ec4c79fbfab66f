"""The strong level's search: it knows only its own seat's view, its sampled deals agree with
every public fact, it repeats given its random source, and it keeps to its budget."""

from __future__ import annotations

import math
import os
import random
from collections import Counter

import pytest
from bot_helpers import play_table
from test_hidden_cards import decisions_agree, scrambled_referee

from buraco_p2p.bots import NormalBot, StrongBot
from buraco_p2p.bots.sampler import Sampler, refusals, seat_knowledge
from buraco_p2p.bots.strong import WORKER_NICE
from buraco_p2p.engine import (
    Discard,
    HandState,
    LocalTable,
    Move,
    Phase,
    RefereeView,
    legal_moves,
)
from buraco_p2p.rules import get_preset


def small() -> StrongBot:
    return StrongBot(think=None, samples=3, horizon=4)


def positions(preset: str, seed: int, every: int = 7) -> list[tuple[LocalTable, HandState]]:
    """Copies of a table and of the view of the player to move, every `every` moves of a
    hand of normal bots."""
    out: list[tuple[LocalTable, HandState]] = []
    step = 0

    def watch(table: LocalTable, seat: int, view: HandState, move: Move) -> None:
        nonlocal step
        step += 1
        if step % every == 0:
            snap = LocalTable.__new__(LocalTable)
            snap.referee = table.referee.copy()
            snap.views = [v.copy() for v in table.views]
            snap.reveals = []
            out.append((snap, snap.views[seat]))

    play_table(get_preset(preset), [NormalBot() for _ in range(4)], seed, watch)
    return out


def searched(preset: str, seed: int, most: int = 8) -> list[tuple[LocalTable, HandState]]:
    """Positions where the search has more than one candidate to weigh."""
    out = []
    for table, view in positions(preset, seed, every=2):
        first = NormalBot().choose_move(view, random.Random(0))
        if len(small().candidates(view, legal_moves(view), first)) > 1:
            out.append((table, view))
    return out[:most]


@pytest.mark.parametrize("preset", ["us", "fechado"])
def test_the_search_decides_alike_whatever_the_hidden_cards_are(preset: str) -> None:
    """A view and two referees that agree with it on every card its seat knows, the other
    cards shuffled: the search chooses the same move from each, with the same scores (so it
    reads no hidden card, not even through a view that holds them)."""
    found = searched(preset, 4)
    assert len(found) >= 5
    scramble = random.Random(99)
    for table, view in found:
        if sum(c < 0 for c in view.known) < 10:
            continue  # too few hidden cards for a shuffle that surely moves one
        mine = small()
        move = mine.choose_move(view, random.Random(5))
        assert mine.last.samples == 3
        for _ in range(2):
            ref = scrambled_referee(table, view, scramble)
            assert ref.known != table.referee.known  # some hidden card really moved
            theirs = small()
            assert theirs.choose_move(ref, random.Random(5)) == move
            assert theirs.last.scores == mine.last.scores


def test_the_levels_decide_from_their_own_seat_alone() -> None:
    for bot in (small, NormalBot):
        compared, differed, disagreed = decisions_agree("us", bot, 4, every=9)
        assert compared >= 10
        assert differed > compared * 0.9
        assert disagreed == 0


def test_sampled_deals_agree_with_every_public_fact() -> None:
    for table, view in positions("fechado", 2)[::3]:
        seat = view.turn
        known = seat_knowledge(view, seat)
        sampler = Sampler(view)
        truth = table.referee.known
        for k in range(5):
            deal = sampler.deal(random.Random(k))
            assert isinstance(deal, RefereeView)
            assert sorted(deal.known) == list(range(view.n))  # a whole deck, each card once
            for s, c in enumerate(known):
                if c >= 0:  # public, or in the seat's own hand
                    assert deal.known[s] == c == truth[s]
            assert deal.state_hash() == view.state_hash()  # the same public state
            assert legal_moves(deal) == legal_moves(view)


def test_the_sampler_reads_one_seat_even_from_a_view_that_knows_all() -> None:
    table, view = positions("us", 3)[5]
    rng = random.Random(1)
    ref = scrambled_referee(table, view, rng)
    a = Sampler(view).deal(random.Random(7))
    b = Sampler(ref, view.turn).deal(random.Random(7))
    assert a.known == b.known  # the referee's extra knowledge changed nothing


def test_the_sampler_shuffles_the_unknown_cards() -> None:
    _, view = positions("italian", 4)[3]
    sampler = Sampler(view)
    deals = {tuple(sampler.deal(random.Random(k)).known) for k in range(6)}
    assert len(deals) == 6


def test_refusals_shape_the_deals() -> None:
    """A player who drew from the stock over a natural top card is dealt, at their latest
    refusal, a pair that melds it less often than unconditioned deals would."""
    checked = 0
    for _, view in positions("italian", 6, every=5):
        seat = view.turn
        found = refusals(view, seat, seat_knowledge(view, seat))
        for r in found:
            assert set(r.held) <= set(view.hands[r.seat])
            assert all(view.known[s] < 0 for s in r.held)
        if not found:
            continue
        sampler = Sampler(view)
        plain = Counter[bool]()
        shaped = Counter[bool]()
        for k in range(40):
            perm = sampler._perm(random.Random(k))
            plain[sampler._plausible(perm)] += 1
            shaped[sampler._plausible(sampler.deal(random.Random(k)).known)] += 1
        assert shaped[True] >= plain[True]
        checked += 1
    assert checked >= 3


def test_the_same_random_source_gives_the_same_search() -> None:
    for _, view in positions("us", 5)[:12]:
        a, b = small(), small()
        assert a.choose_move(view, random.Random(3)) == b.choose_move(view, random.Random(3))
        assert (a.last.samples, a.last.scores) == (b.last.samples, b.last.scores)


def test_deals_shared_among_processes_give_the_same_answer() -> None:
    """Integer scores summed per deal: how the deals were split does not change a total."""
    draws = [v for _, v in searched("us", 6, 3)]
    assert len(draws) == 3
    one = StrongBot(think=None, samples=4, horizon=4)
    two = StrongBot(think=None, samples=4, horizon=4, workers=2)
    try:
        for view in draws:
            move = one.choose_move(view, random.Random(9))
            assert two.choose_move(view, random.Random(9)) == move
            assert one.last.samples == two.last.samples == 4
            assert one.last.scores == two.last.scores
        # the worker plays its deals below a person's client, whatever started it
        helper = two._workers().submit(os.getpriority, os.PRIO_PROCESS, 0).result()
        assert helper >= max(WORKER_NICE, os.getpriority(os.PRIO_PROCESS, 0))
    finally:
        two.close()


class StepClock:
    """A clock that advances `step` seconds at each reading: a search's own pace, made exact."""

    def __init__(self, step: float) -> None:
        self.t = 0.0
        self.step = step

    def __call__(self) -> float:
        self.t += self.step
        return self.t


def test_the_search_stops_within_its_budget() -> None:
    stopped = 0
    for _, view in searched("us", 7, 6):
        clock = StepClock(0.05)
        bot = StrongBot(think=0.6, samples=1000, horizon=2, clock=clock)
        bot.choose_move(view, random.Random(1))
        assert 0 < bot.last.samples < 1000  # the clock stopped it, not the deal count
        assert bot.last.seconds <= 0.6 + 1e-9  # its own reading of the time spent
        stopped += 1
    assert stopped >= 4


def test_a_budget_too_short_for_one_deal_plays_the_normal_move() -> None:
    for _, view in searched("us", 8, 4):
        bot = StrongBot(think=0.01, clock=StepClock(1.0))
        move = bot.choose_move(view, random.Random(2))
        assert bot.last.samples == 0
        assert move == NormalBot().choose_move(view, random.Random(2))


def test_a_discard_is_weighed_against_the_next_cheapest_of_other_faces() -> None:
    """At a discard with a choice, the search weighs the normal level's discard and its two
    next cheapest, never two copies of one face (the same discard twice)."""
    weighed = 0
    for _, view in positions("us", 9, every=1):
        moves = legal_moves(view)
        first = NormalBot().choose_move(view, random.Random(0))
        if view.phase is not Phase.PLAY or not isinstance(first, Discard):
            continue
        cands = [m for m in small().candidates(view, moves, first) if isinstance(m, Discard)]
        face = {m: view.codes[view.known[m.slot]] for m in moves if isinstance(m, Discard)}
        assert cands[0] == first
        assert len({face[m] for m in cands}) == len(cands) == min(3, len(set(face.values())))
        cost = {m: c for c, m in NormalBot().discard_costs(view, moves, random.Random(0))}
        rest = [cost[m] for m in face if face[m] not in {face[c] for c in cands}]
        assert all(cost[m] <= min(rest, default=math.inf) for m in cands[1:])
        weighed += len(cands) == 3
    assert weighed >= 20
