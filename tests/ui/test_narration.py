"""The table feed's words (`ui.narration`): every move of a whole hand told once, from the
public state, in the same words on every screen; and the practice table says them."""

from __future__ import annotations

import random

import pytest
import trio

from buraco_p2p.bots import HeuristicBot
from buraco_p2p.engine import (
    AddToMeld,
    Discard,
    DrawStock,
    LayDown,
    LocalTable,
    Match,
    TakeDiscard,
)
from buraco_p2p.rules import get_preset
from buraco_p2p.text.glyphs import Glyphs
from buraco_p2p.text.narration import Narrator
from buraco_p2p.ui.practice import PracticeTable

NAMES = ("you", "Ana", "Bia", "Caio", "Davi", "Edu")


def _told_hand(preset: str, players: int, seed: int) -> tuple[list[str], LocalTable]:
    rules = get_preset(preset).with_overrides({"players": players})
    rng = random.Random(seed)
    bot = HeuristicBot()
    table = LocalTable.shuffled(Match(rules, 0).next_setup(), rng)
    narrator = Narrator(lambda s: NAMES[s], Glyphs(deck_size=rules.deck_size))
    lines: list[str] = []
    while not table.ended:
        move = bot.choose_move(table.views[table.referee.turn], rng)
        table.push(move)
        steps = narrator.follow(table.views[0])
        assert [s.seat for s in steps] == [move.seat]  # each move told once, when it is made
        lines.extend(steps[0].lines)
        who = NAMES[move.seat]
        first = steps[0].lines[0]
        assert first.startswith(who + " "), first
        if isinstance(move, DrawStock):
            assert "drew 1 card from the stock" in first
        elif isinstance(move, TakeDiscard):
            assert "took the pile (" in first and "top " in first
        elif isinstance(move, Discard):
            face = Glyphs(deck_size=rules.deck_size).card(table.views[0].known[move.slot])
            assert first == f"{who} discarded {face}"
        elif isinstance(move, LayDown | AddToMeld):
            assert any(ch in first for ch in "♠♥♦♣") or "JK" in first
    assert narrator.follow(table.views[0]) == []  # nothing told twice
    return lines, table


@pytest.mark.parametrize(("preset", "players"),
                         [("us", 4), ("classic", 2), ("classic", 3), ("italian", 4),
                          ("classic", 6)])  # fmt: skip
def test_every_move_of_a_whole_hand_is_told_once_with_its_cards(preset: str, players: int) -> None:
    lines, table = _told_hand(preset, players, 5)
    view = table.views[0]
    if view.went_out >= 0:
        assert lines[-1] == f"{NAMES[view.went_out]} went out: the hand is over"
    else:
        assert lines[-1] == "the stock is out: the hand is over"


def test_buracos_pots_and_the_stock_are_told() -> None:
    told = " / ".join(line for seed in range(1, 6) for line in _told_hand("us", 4, seed)[0])
    assert "completed a clean buraco" in told or "completed a dirty buraco" in told
    assert "took a pot (11 cards)" in told
    assert "the stock is running low: 10 cards left" in told
    assert "the stock ran out: a pot becomes the stock" in told
    assert "you drew 1 card from the stock: " in told  # our own card, named for us alone
    assert "Ana drew 1 card from the stock: " not in told


def test_a_view_dealt_again_is_told_from_its_deal() -> None:
    rules = get_preset("us")
    setup = Match(rules, 0).next_setup()
    narrator = Narrator(lambda s: NAMES[s], Glyphs())
    table = LocalTable.shuffled(setup, random.Random(1))
    bot = HeuristicBot()
    rng = random.Random(2)
    for _ in range(3):
        table.push(bot.choose_move(table.views[table.referee.turn], rng))
    assert len(narrator.follow(table.views[0])) == 3
    again = LocalTable.shuffled(setup, random.Random(9))  # the same setup, voided and dealt again
    again.push(bot.choose_move(again.views[again.referee.turn], rng))
    steps = narrator.follow(again.views[0])
    assert len(steps) == 1
    assert "from the stock" in steps[0].lines[0] or "the pile" in steps[0].lines[0]


def test_the_practice_table_feed_tells_each_bots_draw_take_and_discard() -> None:
    async def main() -> list[str]:
        table = PracticeTable(get_preset("us"), 3, bot_delay=0)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(table.run)
            while True:
                view = table.snapshot().view
                if view is not None and view.turn == 0:
                    break
                await trio.sleep(0.01)
            nursery.cancel_scope.cancel()
        return [line.text for line in table.snapshot().chat]

    lines = trio.run(main)
    assert any(line.startswith("hand 1 dealt by ") for line in lines)
    for bot in ("Ana", "Bia", "Caio"):
        said = [line for line in lines if line.startswith(bot + " ")]
        if said:
            assert any("discarded" in line for line in said)
            assert any("from the stock" in line or "took the pile" in line for line in said)


def test_our_draw_is_told_with_its_card_once_the_card_is_revealed_to_us() -> None:
    rules = get_preset("classic")
    table = LocalTable.shuffled(Match(rules, 3).next_setup(), random.Random(3))
    narrator = Narrator(lambda s: NAMES[s], Glyphs(deck_size=rules.deck_size))
    bot = HeuristicBot()
    rng = random.Random(4)
    while table.referee.turn != 0:
        table.push(bot.choose_move(table.views[table.referee.turn], rng))
    narrator.follow(table.views[0])
    table.push(DrawStock(0))
    view = table.views[0]
    slot = next(s for s in view.hands[0] if s not in narrator.shadow.hands[0])  # type: ignore[union-attr]
    hidden = view.copy()
    hidden.known[slot] = -1  # as a networked view holds it until the reveal comes
    assert narrator.follow(hidden) == []
    steps = narrator.follow(view)
    assert steps[0].lines[0] == f"you drew 1 card from the stock: {Glyphs().card(view.known[slot])}"


def test_an_opening_shown_short_and_then_failed_is_told_with_the_new_minimum() -> None:
    import itertools

    rules = get_preset("us")
    for seed in range(1, 40):
        rng = random.Random(seed)
        bot = HeuristicBot()
        table = LocalTable.shuffled(Match(rules, 3).next_setup(), rng)
        while not table.ended and table.referee.turn != 0:
            table.push(bot.choose_move(table.views[table.referee.turn], rng))
        if table.ended:
            continue
        view = table.views[0]
        table.push(bot.choose_move(view, rng))  # the draw (or the first card kept)
        view = table.views[0]
        if table.referee.turn != 0 or view.opened[view.side_of(0)]:
            continue
        short = None
        for trio_ in itertools.combinations(view.hands[0], 3):
            move = LayDown(0, (trio_,))
            trial = view.copy()
            if view.check(move) is None:
                trial.push(move)
                if trial.opening:
                    short = move
                    break
        if short is None:
            continue
        narrator = Narrator(lambda s: NAMES[s], Glyphs(deck_size=rules.deck_size))
        narrator.follow(view)
        table.push(short)
        shown = narrator.follow(table.views[0])[0].lines[0]
        assert shown.startswith("you showed ") and " to open: " in shown and " of 50 " in shown
        discard = next(Discard(0, s) for s in table.views[0].hands[0]
                       if table.views[0].check(Discard(0, s)) is None)  # fmt: skip
        table.push(discard)
        lines = narrator.follow(table.views[0])[0].lines
        assert lines[1] == ("your opening fell short: the cards go back to the hand and the "
                            "minimum to open is now 65")
        return
    raise AssertionError("no position with a short opening found")


def test_a_walk_out_is_told_with_who_and_the_charge() -> None:
    from buraco_p2p.play.line import describe_event
    from buraco_p2p.session import Abandoned
    from buraco_p2p.text.narration import abandoned_text

    ev = Abandoned(hand=2, parties=(1,), sides=(1,), points=150)
    text = abandoned_text(ev, lambda p: NAMES[p])
    assert text == "Ana walked out of hand 3: the hand is void and their side is charged 150 points"
    assert describe_event(ev, list(NAMES), None, lambda p: NAMES[p]) == text  # line mode: same
