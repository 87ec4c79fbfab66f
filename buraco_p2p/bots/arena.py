"""Self-play in one process: a referee deal, one bot per seat each holding only its own view.

`LocalTable` keeps the referee and the `PlayerView`s (2, 3, 4 or 6, as the rules say) in step
and feeds each view the reveals a networked session would; a bot is only ever shown its own
seat's view. Everything random (first dealer, cut, shuffle, the bots' choices) is drawn from the
`random.Random` passed in, so a seed replays a match move for move.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

from buraco_p2p.bots.base import Bot
from buraco_p2p.cards import face_of
from buraco_p2p.engine import (
    HandResult,
    HandSetup,
    LocalTable,
    Match,
    Move,
    RefereeView,
    cutter_seat,
)
from buraco_p2p.rules import RuleSet, score_team_hand, total

# A hand that has not ended after this many moves means a bot is looping: fail loudly.
MAX_MOVES_PER_HAND: Final = 20_000
# A match not decided after this many hands is reported unfinished rather than run forever.
MAX_HANDS_PER_MATCH: Final = 200


class HandDidNotEnd(RuntimeError):
    """A hand ran past `MAX_MOVES_PER_HAND` moves."""


@dataclass(frozen=True, slots=True)
class HandRecord:
    """Everything needed to replay a hand: its setup, the shuffle and the move log."""

    setup: HandSetup
    permutation: tuple[int, ...]
    moves: tuple[Move, ...]
    result: HandResult


@dataclass(frozen=True, slots=True)
class MatchRecord:
    """A played match. `winner` is None only if it hit `MAX_HANDS_PER_MATCH`.

    `scores` and `winner` are per match side: teams at four and six, players at two and three.
    """

    rules: RuleSet
    bot_names: tuple[str, ...]
    first_dealer: int
    hands: tuple[HandRecord, ...]
    scores: tuple[int, ...]
    winner: int | None


def play_hand(
    setup: HandSetup,
    permutation: Sequence[int],
    bots: Sequence[Bot],
    rngs: Sequence[random.Random],
    max_moves: int = MAX_MOVES_PER_HAND,
) -> HandRecord:
    """Play one hand to its end; each bot sees only `table.views[its seat]`."""
    n = setup.rules.players
    if len(bots) != n or len(rngs) != n:
        raise ValueError(f"a hand of {n} players needs {n} bots and {n} random sources")
    table = LocalTable(setup, permutation)
    moves: list[Move] = []
    while not table.ended:
        if len(moves) >= max_moves:
            raise HandDidNotEnd(f"hand {setup.hand_number} did not end after {max_moves} moves")
        seat = table.referee.turn
        move = bots[seat].choose_move(table.views[seat], rngs[seat])
        table.push(move)
        moves.append(move)
    return HandRecord(setup, tuple(permutation), tuple(moves), table.result())


def play_match(
    rules: RuleSet,
    bots: Sequence[Bot],
    rng: random.Random,
    max_hands: int = MAX_HANDS_PER_MATCH,
    on_hand: Callable[[HandRecord, tuple[int, ...]], None] | None = None,
    clock: Callable[[], float] | None = None,
) -> MatchRecord:
    """Play a match to its end. `rng` decides the first dealer, every cut and shuffle, and
    seeds one random source per seat for the bots. `on_hand(record, match_scores)` is called
    after each hand (to print a match as it goes). A match with a time limit (rule `minutes`)
    needs `clock` (seconds): after each hand, the match ends if the time is up."""
    n = rules.players
    if len(bots) != n:
        raise ValueError(f"a match of {n} players needs {n} bots")
    if rules.minutes and clock is None:
        raise ValueError("a match with a time limit (rule minutes) needs a clock")
    start = clock() if clock is not None else 0.0
    first_dealer = rng.randrange(n)
    bot_rngs = [random.Random(rng.getrandbits(64)) for _ in range(n)]
    match = Match(rules, first_dealer)
    hands: list[HandRecord] = []
    while not match.over and len(hands) < max_hands:
        # The cut matters only where the preset pays for a cut of 22; elsewhere there is none.
        cut = rng.randint(1, rules.deck_size - 1) if rules.cut_22_bonus else None
        setup = match.next_setup(cut=cut)
        perm = list(range(rules.deck_size))
        rng.shuffle(perm)
        record = play_hand(setup, perm, bots, bot_rngs)
        match.record(record.result)
        if clock is not None:
            match.check_time(clock() - start)
        hands.append(record)
        if on_hand is not None:
            on_hand(record, tuple(match.scores))
    return MatchRecord(
        rules,
        tuple(b.name for b in bots),
        first_dealer,
        tuple(hands),
        tuple(match.scores),
        match.winner,
    )


def replay(record: HandRecord) -> RefereeView:
    """The final referee state of a recorded hand, every move validated again."""
    ref = RefereeView(record.setup, record.permutation)
    for move in record.moves:
        ref.push(move)
    return ref


def rescore(record: HandRecord) -> tuple[int, ...]:
    """Side totals of a recorded hand, recomputed from its log with the rules layer's scorer
    (not the engine's), as a cross-check of `record.result`."""
    ref = replay(record)
    if not ref.ended:
        raise ValueError("the recorded log does not end the hand")
    rules = record.setup.rules
    n = rules.deck_size
    cutter = cutter_seat(record.setup.dealer, rules.players)
    out: list[int] = []
    for team, seats in enumerate(ref.sides):
        pot_i = ref.team_pot[team]
        unplayed = ref.pot_unplayed(team)
        pot_slots = set(ref.layout.pots[pot_i]) if unplayed else set()
        in_hands = [
            face_of(ref.known[s], n)
            for seat in seats
            for s in ref.hands[seat]
            if s not in pot_slots
        ]
        lines = score_team_hand(
            rules,
            melds=[tm.meld for tm in ref.melds[team]],
            cards_in_hands=in_hands,
            took_pot=pot_i >= 0,
            went_out=ref.went_out >= 0 and ref.went_out in seats,
            # The pot's cards still in hand: one it left only by a discard stays unplayed.
            unplayed_pot=[
                face_of(ref.known[s], n)
                for seat in seats
                for s in ref.hands[seat]
                if s in pot_slots
            ]
            if unplayed
            else None,
            cut_22=record.setup.cut == rules.cut_bonus_size and cutter in seats,
        )
        out.append(total(lines))
    return tuple(out)
