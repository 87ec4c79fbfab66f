"""Bots decide from what their seat may know: scrambling every card hidden from that seat
(other hands, the stock, the pots) never changes a decision."""

from __future__ import annotations

import copy
import random
from collections.abc import Callable

import pytest
from bot_helpers import PRESET_NAMES, play_table

from buraco_p2p.bots import Bot, EasyBot, HeuristicBot, NormalBot, RandomBot, StrongBot
from buraco_p2p.engine import HandState, LocalTable, Move, RefereeView, legal_moves
from buraco_p2p.rules import get_preset


def scrambled_referee(table: LocalTable, view: HandState, rng: random.Random) -> RefereeView:
    """A referee that agrees with `view` on every card it knows, with all other cards of the
    deck shuffled among the other slots, brought to the same point of the hand."""
    truth = table.referee.known
    hidden = [s for s in range(len(truth)) if view.known[s] < 0]
    cards = [truth[s] for s in hidden]
    rng.shuffle(cards)
    perm = list(truth)
    for s, c in zip(hidden, cards, strict=True):
        perm[s] = c
    ref = RefereeView(table.referee.setup, perm)
    for move in view.moves:
        ref.push(move)
    return ref


class PeekingBot(RandomBot):
    """A cheat: its choice depends on the next stock card, which nobody may know."""

    name = "peeking"

    def choose_move(self, view: HandState, rng: random.Random) -> Move:
        moves = legal_moves(view)
        return moves[max(view.known[view.stock[-1]], 0) % len(moves)] if view.stock else moves[0]


def decisions_agree(
    preset: str, bot_class: Callable[[], Bot], seed: int, every: int = 5
) -> tuple[int, int, int]:
    """Play a hand with `bot_class` at every seat (normal bots, for a searching one); every
    `every`-th decision, compare the move `bot_class` chooses from the player's view with
    the one it chooses from two scrambled referees.
    Returns (compared, differing decks, differing moves)."""
    player = bot_class if not isinstance(bot_class(), StrongBot) else NormalBot
    bots: list[Bot] = [player() for _ in range(4)]
    scramble = random.Random(99)
    compared = differed = disagreed = 0
    step = 0

    def watch(table: LocalTable, seat: int, view: HandState, move: Move) -> None:
        nonlocal compared, differed, disagreed, step
        step += 1
        if step % every:
            return
        for _ in range(2):
            ref = scrambled_referee(table, view, scramble)
            assert ref.state_hash() == view.state_hash()
            # Some card hidden from this seat really is different in the scrambled deck.
            differed += any(ref.known[s] != table.referee.known[s] for s in range(len(ref.known)))
            rng = random.Random(step)
            mine = bot_class().choose_move(view, copy.copy(rng))
            theirs = bot_class().choose_move(ref, copy.copy(rng))
            disagreed += mine != theirs
            compared += 1

    play_table(get_preset(preset), bots, seed, watch)
    return compared, differed, disagreed


@pytest.mark.parametrize("preset", PRESET_NAMES)
@pytest.mark.parametrize("bot_class", [HeuristicBot, NormalBot, EasyBot, RandomBot])
def test_scrambled_hidden_cards_give_the_same_decisions(preset: str, bot_class: type[Bot]) -> None:
    compared, differed, disagreed = decisions_agree(preset, bot_class, 5)
    assert compared > 20
    assert differed > compared * 0.9
    assert disagreed == 0


def test_a_bot_that_peeks_at_the_stock_is_caught() -> None:
    compared, _, disagreed = decisions_agree("us", PeekingBot, 5)
    assert compared > 20
    assert disagreed > 0
