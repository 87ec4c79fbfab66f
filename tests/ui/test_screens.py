"""What the screen shows: the table at every size, the panels, the fairness status and a
complaint, progress, ASCII and no-colour modes, and the layouts for 2, 3, 4 and 6 seats."""

from __future__ import annotations

import dataclasses
import itertools
import re

import pytest
from ui_helpers import Sent, find_position, positions, snapshot_of, text_of

from buraco_p2p.engine import LayDown, Phase
from buraco_p2p.rules import get_preset
from buraco_p2p.text.glyphs import ASCII_SYMBOLS, Glyphs
from buraco_p2p.ui import (
    ChatLine,
    Client,
    Complaint,
    Fairness,
    Panel,
    Progress,
    SeatInfo,
    render,
)
from buraco_p2p.ui.keys import Outcome, press
from buraco_p2p.ui.panels import HELP
from buraco_p2p.ui.seating import min_size, places
from buraco_p2p.ui.theme import no_color, style

CLASSIC = get_preset("classic")
SUITS = "♠♥♦♣"


def client_at(pred, ascii: bool = False, **kw) -> Client:  # type: ignore[no-untyped-def]
    table, match = find_position(CLASSIC, pred)
    return Client(snapshot_of(table, match, **kw), Sent(), Glyphs(ascii=ascii))


def mid_hand(t) -> bool:  # type: ignore[no-untyped-def]
    r = t.referee
    return r.turn == 0 and r.phase is Phase.DRAW and len(r.melds[0]) >= 2 and len(r.pile) >= 3


def screen(c: Client, cols: int = 80, rows: int = 24) -> str:
    return text_of(render(c, cols, rows, now=0.0))


@pytest.mark.parametrize("cols,rows", [(80, 24), (100, 30), (132, 43), (200, 60)])
def test_every_row_is_the_terminals_width_at_every_size(cols: int, rows: int) -> None:
    count = 0
    for table, match in positions(CLASSIC, 3):
        count += 1
        if count % 7:
            continue
        c = Client(snapshot_of(table, match), Sent())
        lines = screen(c, cols, rows).splitlines()
        assert len(lines) == rows
        assert all(len(line) == cols for line in lines), lines
        if count > 400:
            break


def test_the_table_shows_hand_melds_pile_and_whose_turn() -> None:
    c = client_at(mid_hand)
    view = c.view
    assert view is not None
    text = screen(c)
    lines = text.splitlines()
    hand = next(line for line in lines if line.startswith(" Hand "))
    assert f"Hand {len(view.hands[0]):>2}" in hand
    g = Glyphs()
    # Sorted and grouped by suit: the suits appear in order, each in one run.
    suits = [ch for ch in hand if ch in SUITS]
    assert suits == sorted(suits, key=SUITS.index)
    for tm in view.melds[0]:
        assert f"{tm.meld.card_points:>3} " in text
    assert f"Us: {len(view.melds[0])} melds" in text
    top = g.card(view.known[view.pile[-1]])
    assert f"top {top}" in text
    assert f"Stock {len(view.stock)}" in text
    assert "your turn" in lines[1]
    # The partner sits at the top, the opponents left and right.
    assert "Bia · partner" in lines[2]
    assert "Ana" in text and "Caio" in text
    assert "d draw" in lines[-1]


def test_clean_and_dirty_buracos_are_marked() -> None:
    def buraco(t) -> bool:  # type: ignore[no-untyped-def]
        return any(tm.meld.is_buraco for tm in t.referee.melds[0])

    c = client_at(buraco)
    text = screen(c, 132, 43)
    view = c.view
    assert view is not None
    for tm in view.melds[0]:
        if tm.meld.is_buraco:
            word = "clean buraco" if tm.meld.clean else "dirty buraco"
            assert word in text
    assert ("★clean buraco" in text) or ("☆dirty buraco" in text)


def test_ascii_mode_draws_nothing_but_ascii() -> None:
    c = client_at(mid_hand, ascii=True)
    for panel in (Panel.NONE, Panel.HELP, Panel.PILE, Panel.RULES, Panel.HISTORY):
        c.panel = panel
        for cols, rows in ((80, 24), (132, 43)):
            text = screen(c, cols, rows)
            assert text.isascii(), [ch for ch in text if not ch.isascii()]
            lines = text.splitlines()
            assert len(lines) == rows and all(len(line) == cols for line in lines)
    c.panel = Panel.NONE
    assert re.search(r"\b[A2-9TJQK][SHDC]\b", screen(c))


def test_no_color_turns_the_colours_off_but_keeps_the_selection_visible() -> None:
    assert no_color({"NO_COLOR": "1"}) and not no_color({"NO_COLOR": ""}) and not no_color({})
    plain, coloured = style(False), style(True)
    assert coloured.get_attrs_for_style_str("class:card.red").color == "ansired"
    assert not plain.get_attrs_for_style_str("class:card.red").color
    assert plain.get_attrs_for_style_str("class:selected").reverse


def test_a_small_terminal_gets_a_message_instead_of_the_table() -> None:
    c = client_at(mid_hand)
    text = screen(c, 79, 24)
    assert "needs at least 80x24" in text and "79x24" in text
    assert "Hand" not in text
    assert "needs at least" in screen(c, 80, 23)
    assert "needs at least" not in screen(c, 80, 24)


def test_fairness_status_and_a_complaint_shown_loudly() -> None:
    ok = Fairness(checked=True, shuffles_verified=4, shuffles_total=4)
    c = client_at(mid_hand, fairness=ok)
    assert "4/4 shuffles verified, 0 complaints" in screen(c)
    bad = Fairness(True, 4, 4, (Complaint(2, "Caio", "bad shuffle proof"),))
    c.update(dataclasses.replace(c.snap, fairness=bad))
    lines = screen(c).splitlines()
    assert "CHEATING COMPLAINT against Caio (seat 2): bad shuffle proof" in lines[0]
    assert "1 complaint" in lines[1]
    # Practice: no count, the reason said instead.
    c.update(dataclasses.replace(c.snap, fairness=Fairness(checked=False)))
    assert "practice: no cryptography" in screen(c)


def test_progress_during_shuffles_names_the_seat_at_work() -> None:
    c = client_at(mid_hand, progress=Progress("shuffling", 3, 1, 4))
    text = screen(c)
    assert "shuffling: Caio (seat 3)" in text and "1/4" in text


def _help_pages(c: Client, cols: int = 80, rows: int = 24) -> str:
    c.toggle_panel(Panel.HELP)
    pages = [screen(c, cols, rows)]
    while c.panel_page + 1 < c.rule_pages:
        press(c, "?")
        pages.append(screen(c, cols, rows))
    press(c, "escape")
    return "\n".join(pages)


@pytest.mark.parametrize("ascii", [False, True])
def test_the_help_panel_lists_every_key_and_every_mark_uncut(ascii: bool) -> None:
    c = client_at(mid_hand, ascii=ascii)
    text = _help_pages(c)
    assert "more" not in text  # nothing cut: what does not fit goes on the next page
    for key, _ in HELP:
        assert (key.translate(ASCII_SYMBOLS) if ascii else key) in text
    for key in ("d", "p", "m", "M", "a", "x", "u", "s", "v", "h", "r", "c", "C", "q", "g", "t",
                "Tab", "Esc", "Ctrl-Z", "space", "?", "f", "E", "V", "R"):
        assert any(key in k.split() for k, _ in HELP), key
    marks = ("**", "^^", "++", "gg", "oo", "*", "+") if ascii else ("▲▲", "^^", "++", "gg",
                                                                   "oo", "★", "☆", "▶")
    for mark in marks:
        assert f"  {mark} " in text, mark
    assert "its top card first" in text  # the line cut at 80 columns before
    if ascii:
        assert "▲" not in text and "^^ selected" not in text


def test_rules_pile_and_history_panels() -> None:
    c = client_at(mid_hand)
    c.toggle_panel(Panel.RULES)
    text = screen(c)
    assert "Rules: classic" in text and "r next page (1/" in text
    assert text.index(" Dealing") < text.index(" Melds")
    while c.panel_page + 1 < c.rule_pages:
        press(c, "r")
        text += screen(c)
    # Plain words first, grouped as a player thinks, with the values.
    words = text.split("Every parameter")[0]
    for heading in ("Dealing", "Melds", "Pots and the stock", "Buracos and going out",
                    "Scoring"):
        assert f" {heading}" in words, heading
    assert "to open, a side lays down at least 50 points" in words
    assert not any("_" in line for line in words.splitlines() if line.startswith("  "))
    assert "the match ends when a side has 2000 points or more" in text
    assert "target_score = 2000" in text
    assert "clean_run_length_bonus = none" in text
    assert " more" not in text.replace("or more", "")  # nothing cut off
    for key in CLASSIC.to_wire():
        assert key in text or key in ("v", "name")
    press(c, "escape")
    assert c.current_panel() is Panel.NONE
    c.toggle_panel(Panel.PILE)
    text = screen(c)
    view = c.view
    assert view is not None
    assert f"Pile ({len(view.pile)} cards, top first)" in text
    pile_line = text.splitlines()[3]
    g = Glyphs()
    assert pile_line.split() == [g.card(view.known[s]) for s in reversed(view.pile)][:26]
    c.toggle_panel(Panel.HISTORY)
    assert "no hand finished yet" in screen(c)


def test_the_end_of_a_hand_shows_both_sides_breakdown() -> None:
    table, match = find_position(CLASSIC, lambda t: t.ended)
    result = table.result()
    snap = snapshot_of(table, match, history=(result,))
    snap = dataclasses.replace(snap, scores=result.totals)
    c = Client(snap, Sent())
    text = screen(c)
    assert "Hand 1 is over" in text
    total = next(line for line in text.splitlines() if "hand total" in line)
    assert total.split()[-2:] == [str(result.totals[0]), str(result.totals[1])]
    assert "Enter next hand" in text


@pytest.mark.parametrize(
    "players,me,left,top,right",
    [
        (2, 0, (), (1,), ()),
        (3, 0, (1,), (), (2,)),
        (4, 0, (1,), (2,), (3,)),
        (4, 2, (3,), (0,), (1,)),
        (6, 0, (1, 2), (3,), (4, 5)),
        (6, 4, (5, 0), (1,), (2, 3)),
    ],
)
def test_seats_sit_around_the_table_for_every_count(
    players: int, me: int, left: tuple[int, ...], top: tuple[int, ...], right: tuple[int, ...]
) -> None:
    p = places(players, me)
    assert (p.left, p.top, p.right) == (left, top, right)
    assert sorted([me, *p.left, *p.top, *p.right]) == list(range(players))


def test_bad_seat_counts_are_refused() -> None:
    with pytest.raises(ValueError):
        places(1, 0)
    with pytest.raises(ValueError):
        places(4, 4)


@pytest.mark.parametrize("players", [2, 3, 4, 6])
def test_the_layout_follows_the_seat_count(players: int) -> None:
    """Before the deal (no view yet) every other seat's name is drawn in its place."""
    names = ["You", "Ana", "Bia", "Caio", "Davi", "Edu"][:players]
    sides = [s % 2 for s in range(players)] if players in (4, 6) else list(range(players))
    table, match = find_position(CLASSIC, mid_hand)
    snap = snapshot_of(table, match)
    seats = tuple(SeatInfo(s, names[s], sides[s], sides[s], s != 0) for s in range(players))
    snap = dataclasses.replace(snap, seats=seats, view=None, scores=(0,) * players)
    c = Client(snap, Sent())
    cols, rows = min_size(players)
    assert "needs at least" in screen(c, cols - 1, rows)
    lines = screen(c, cols, rows).splitlines()
    p = places(players, 0)
    for s in p.top:
        assert names[s] in lines[2]
    for s in p.left:
        assert any(line.startswith(f"  {names[s]}") for line in lines[3:-8])
    for s in p.right:
        assert any(f"│  {names[s]}" in line for line in lines[3:-8])
    assert "waiting for the deal" in "\n".join(lines)


def test_text_from_other_peers_cannot_move_the_cursor_or_break_a_row() -> None:
    c = client_at(mid_hand)
    evil = "\x1b[2J\x1b[H\r\nowned\x07\x08"
    seats = tuple(dataclasses.replace(s, nick=evil) if s.seat else s for s in c.snap.seats)
    chat = (ChatLine(1, evil),)
    complaint = Fairness(True, 1, 4, (Complaint(1, evil, evil),))
    extra = {"seed": evil}
    c.update(dataclasses.replace(c.snap, seats=seats, chat=chat, fairness=complaint, extra=extra))
    view = c.view
    assert view is not None
    view.turn = 1  # the status line names the player to move
    for cols, rows in ((80, 24), (132, 43)):
        lines = screen(c, cols, rows).splitlines()
        assert len(lines) == rows and all(len(line) == cols for line in lines)
        assert not any(ch in "".join(lines) for ch in "\x1b\r\x07\x08")
    assert "[2J" in screen(c)  # shown harmlessly, not obeyed


def test_a_table_without_a_signed_log_says_there_is_nothing_to_save() -> None:
    table, match = find_position(CLASSIC, lambda t: t.ended)
    result = table.result()
    snap = snapshot_of(table, match, history=(result,))
    w = 0 if result.totals[0] > result.totals[1] else 1
    snap = dataclasses.replace(snap, scores=result.totals, match_over=True, winner=w)
    c = Client(snap, Sent())
    text = screen(c)
    assert "The match is over." in text and ("You win" if w == 0 else "Them win") in text
    assert "nothing to save or audit" in text
    assert press(c, "s") is Outcome.NONE  # no save offered
    assert press(c, "q") is Outcome.QUIT


def test_melds_shown_toward_the_opening_stay_apart_from_the_table() -> None:
    """Where a turn's melds count together toward the opening minimum, a lay-down short of it
    is shown but stays in the hand: drawn under the side's melds and marked in the hand."""

    def weak(t) -> tuple[int, ...] | None:  # type: ignore[no-untyped-def]
        v = t.views[0]
        if t.referee.turn != 0 or t.referee.phase is not Phase.PLAY or v.opened[0]:
            return None
        for combo in itertools.combinations(v.hands[0], 3):
            move = LayDown(0, (combo,))
            if v.check(move) is None:
                trial = v.copy()
                trial.push(move)
                if trial.opening:
                    return combo
        return None

    table, match = find_position(CLASSIC, lambda t: weak(t) is not None)
    meld = weak(table)
    assert meld is not None
    table.push(LayDown(0, (meld,)))
    c = Client(snapshot_of(table, match), Sent())
    text = screen(c)
    pts = sum(tm.meld.card_points for tm in table.views[0].opening)
    assert f"opening so far: {pts} of {table.views[0].initial_minimum(0)}" in text
    lines = text.splitlines()
    y = next(i for i, line in enumerate(lines) if line.startswith(" Hand "))
    assert lines[y + 1].count("oo") == 3
