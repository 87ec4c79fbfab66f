"""The player's intents: moves are built, checked by the engine and sent only when legal;
otherwise the engine's reason is shown in words. Hints come from `legal_moves`."""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable

from ui_helpers import Sent, find_position, snapshot_of, text_of

from buraco_p2p.bots import HeuristicBot
from buraco_p2p.engine import (
    AddToMeld,
    Discard,
    DrawStock,
    LayDown,
    LocalTable,
    Match,
    Phase,
    TakeDiscard,
    legal_moves,
    team_of,
)
from buraco_p2p.rules import get_preset
from buraco_p2p.text.words import suggest
from buraco_p2p.ui import Client, render
from buraco_p2p.ui.keys import Outcome, press

CLASSIC = get_preset("classic")


def at(pred: Callable[[LocalTable], bool]) -> tuple[Client, Sent, LocalTable]:
    """A client for seat 0 at the first bot-played position where `pred` holds."""
    table, match = find_position(CLASSIC, pred)
    sent = Sent()
    return Client(snapshot_of(table, match), sent), sent, table


def my_draw(t: LocalTable) -> bool:
    return t.referee.turn == 0 and t.referee.phase is Phase.DRAW


def my_play(t: LocalTable) -> bool:
    return t.referee.turn == 0 and t.referee.phase is Phase.PLAY


def test_an_illegal_move_is_not_sent_and_the_engine_reason_is_shown() -> None:
    c, sent, _ = at(my_draw)
    c.discard()
    assert sent.moves == []
    assert c.message is not None and c.message.kind == "error"
    assert "draw first" in c.message.text


def test_a_legal_move_is_sent_once_and_the_selection_cleared() -> None:
    c, sent, _ = at(my_draw)
    c.toggle()
    c.draw()
    assert sent.moves == [DrawStock(0)]
    assert c.selected == [] and c.pending
    c.draw()  # still on its way: not sent twice
    assert sent.moves == [DrawStock(0)]
    c.sent("the stock is gone")
    assert not c.pending and c.message is not None and "refused" in c.message.text


def test_hints_cycle_the_engines_legal_moves_and_enter_asks_before_playing_one() -> None:
    c, sent, table = at(my_play)
    view = table.views[0]
    legal = legal_moves(view)
    seen = []
    c.hint()
    for _ in range(len(c.hints)):
        seen.append(c.hints[c.hint_at])
        c.hint()
    # Every legal play is offered, once per way it reads: no two hints read the same.
    texts = [suggest(m, view, c.glyphs) for m in seen]
    assert len(set(texts)) == len(texts)
    assert set(texts) == {suggest(m, view, c.glyphs) for m in legal}
    # Discards come last: the melds are what a player looks for.
    kinds = [isinstance(m, Discard) for m in seen]
    assert kinds == sorted(kinds)
    shown = c.hints[c.hint_at]
    assert c.message is not None and "Enter: play it?" in c.message.text
    assert press(c, "enter") is Outcome.NONE
    assert sent.moves == []  # one key never plays a hint: it asks, showing the move
    assert c.confirm is not None and suggest(shown, view, c.glyphs) in c.confirm[0]
    press(c, "y")
    assert sent.moves == [shown]


def test_escape_clears_the_hint_cycle_and_a_declined_hint_is_not_played() -> None:
    c, sent, _ = at(my_play)
    c.hint()
    c.hint()
    assert c.hint_at == 1
    press(c, "escape")
    assert c.hint_at == -1 and c.selected == []
    c.hint()
    assert c.hint_at == 0  # the cycle starts again
    press(c, "enter")
    press(c, "n")
    assert sent.moves == [] and c.confirm is None


def test_undo_takes_back_the_last_card_then_escape_clears() -> None:
    c, _, _ = at(my_play)
    c.toggle()
    c.move_cursor(1)
    c.toggle()
    first, _ = c.selected
    c.undo()
    assert c.selected == [first]
    c.move_cursor(1)
    c.toggle()
    c.stage()
    assert c.staged and not c.selected
    c.undo()  # the group comes back as the selection
    assert c.selected and not c.staged
    assert press(c, "escape") is Outcome.NONE
    assert c.selected == [] and c.staged == []


def test_sorting_by_rank_keeps_the_cards_and_changes_the_order() -> None:
    def spread(t: LocalTable) -> bool:
        v = t.views[0]
        hand = [v.known[s] % 52 for s in v.hands[0] if v.known[s] < 104]
        return my_play(t) and len({c // 13 for c in hand}) >= 3

    c, _, _ = at(spread)
    by_suit = c.hand()
    c.sort_toggle()
    by_rank = c.hand()
    assert sorted(by_suit) == sorted(by_rank) and by_suit != by_rank
    view = c.view
    assert view is not None
    ranks = [view.known[s] % 52 % 13 for s in by_rank if view.known[s] < 104]
    assert ranks == sorted(ranks)


def test_adding_to_the_one_meld_that_fits_needs_no_question() -> None:
    def one_fit(t: LocalTable) -> bool:
        if not my_play(t):
            return False
        adds = {m.meld for m in legal_moves(t.views[0]) if isinstance(m, AddToMeld)}
        return len(adds) == 1 and len(t.referee.melds[0]) >= 1

    c, sent, table = at(one_fit)
    add = next(m for m in legal_moves(table.views[0]) if isinstance(m, AddToMeld))
    c.selected = list(add.slots)
    c.add()
    assert len(sent.moves) == 1 and isinstance(sent.moves[0], AddToMeld)
    assert sent.moves[0].meld == add.meld


def test_a_failed_opening_attempt_is_confirmed_before_it_is_sent() -> None:
    """Under the opening minimum the engine counts a failed attempt either at the lay-down
    or, where a turn's melds count together, when the turn ends: either way, ask first."""

    def weak_meld(t: LocalTable) -> bool:
        return my_play(t) and not t.referee.opened[team_of(0)] and _weak(t) is not None

    c, sent, table = at(weak_meld)
    meld = _weak(table)
    assert meld is not None
    c.selected = list(meld)
    c.meld()
    if c.confirm is not None:  # the lay-down itself fails
        assert "opening minimum" in c.confirm[0]
        press(c, "n")
        assert sent.moves == [] and c.confirm is None
        c.selected = list(meld)
        c.meld()
        press(c, "y")
        assert sent.moves == [LayDown(0, (meld,))]
        return
    # Where a turn's melds count together it is staged, unsent; sent on a confirmation, it
    # stands as the turn's opening so far and ending the turn would fail it.
    assert sent.moves == [] and c.staged == [meld]
    c.meld()
    assert c.confirm is not None and "failed attempt" in c.confirm[0]
    press(c, "y")
    assert sent.moves == [LayDown(0, (meld,))]
    table.push(sent.moves[0])
    c.sent(None)
    c.update(snapshot_of(table, Match(CLASSIC, 0)))
    c.selected = [next(s for s in c.hand() if s not in meld)]
    c.discard()
    assert c.confirm is not None and "failed attempt" in c.confirm[0]
    assert len(sent.moves) == 1
    press(c, "y")
    assert len(sent.moves) == 2 and isinstance(sent.moves[1], Discard)


def _weak(t: LocalTable) -> tuple[int, ...] | None:
    """Three hand cards that make a legal meld under the opening minimum, if any."""
    v = t.views[0]
    for combo in itertools.combinations(v.hands[0], 3):
        move = LayDown(0, (combo,))
        if v.check(move) is None:
            trial = v.copy()
            trial.push(move)
            melds = trial.melds[team_of(0)]
            if trial.failed[0] > v.failed[0] or not melds:
                return combo
    return None


def test_quit_asks_first_and_chat_keys_type_a_line() -> None:
    c, _, _ = at(my_draw)
    assert press(c, "q") is Outcome.NONE and c.confirm is not None
    assert press(c, "n") is Outcome.NONE and c.confirm is None
    press(c, "q")
    assert press(c, "y") is Outcome.QUIT
    press(c, "c")
    for ch in "oi!":
        press(c, ch)
    press(c, "backspace")
    assert c.chat_text == "oi"
    assert press(c, "enter") is Outcome.CHAT and c.chat_sent == "oi"
    assert c.chat_text is None


def test_fechado_pile_take_shows_the_one_justification_the_engine_finds() -> None:
    fechado = get_preset("fechado")

    def takes(t: LocalTable) -> list[TakeDiscard]:
        if not my_draw(t) or not t.referee.pile:
            return []
        return [m for m in legal_moves(t.views[0]) if isinstance(m, TakeDiscard)]

    table, match = find_position(fechado, lambda t: len(takes(t)) == 1)
    sent = Sent()
    c = Client(snapshot_of(table, match), sent)
    c.take_pile()
    assert sent.moves == takes(table)

    table, match = find_position(fechado, lambda t: len(takes(t)) > 1)
    sent = Sent()
    c = Client(snapshot_of(table, match), sent)
    c.take_pile()
    assert sent.moves == [] and c.message is not None
    assert "Select the cards that meld the pile's top card" in c.message.text
    # Selecting one justification's cards takes the pile showing them.
    one = takes(table)[-1]
    c.selected = list(one.justify)
    c.take_pile()
    assert sent.moves == [TakeDiscard(0, one.justify)]


def test_a_refusal_is_cleared_when_the_table_moves_on() -> None:
    """A stale error must not hide the prompt of the player's next turn."""
    c, _, table = at(my_play)
    c.draw()  # refused: the player has drawn already
    assert c.message is not None and c.message.kind == "error"
    bot = HeuristicBot()
    rng = random.Random(1)
    while table.referee.turn == 0:
        table.push(bot.choose_move(table.views[0], rng))
    c.update(snapshot_of(table, Match(CLASSIC, 0)))
    assert c.message is None


def test_the_card_just_drawn_is_marked_until_the_turn_ends() -> None:
    c, _, table = at(my_draw)
    before = set(table.views[0].hands[0])
    table.push(DrawStock(0))
    match = Match(CLASSIC, 0)
    c.update(snapshot_of(table, match))
    drawn = set(table.views[0].hands[0]) - before
    assert c.new_cards == drawn and len(drawn) == 1
    text = text_of(render(c, 80, 24, 0.0))
    lines = text.splitlines()
    y = next(i for i, line in enumerate(lines) if line.startswith(" Hand "))
    assert lines[y + 1].count("++") == 1
    bot = HeuristicBot()
    rng = random.Random(3)
    while table.referee.turn == 0 and not table.ended:
        table.push(bot.choose_move(table.views[0], rng))
    c.update(snapshot_of(table, match))
    assert c.new_cards == set()


def test_hints_say_what_to_do() -> None:
    c, _, _ = at(my_draw)
    c.hint()
    assert c.message is not None and "hint 1/" in c.message.text
    assert "draw from the stock" in c.message.text
    c, _, _ = at(
        lambda t: my_play(t) and any(isinstance(m, LayDown) for m in legal_moves(t.views[0]))
    )
    c.hint()
    assert c.message is not None and "lay down " in c.message.text
