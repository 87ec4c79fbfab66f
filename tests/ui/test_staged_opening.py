"""A partial opening is staged in the client, not sent: where a turn's melds count together
toward the opening minimum, a lay-down short of it would show the cards to everyone for good
and fail at the turn's end, so the client holds the melds (`u` takes back the last, Esc all)
and sends them as one lay-down once their sum reaches the minimum, or on a confirmed failed
attempt."""

from __future__ import annotations

import itertools

from ui_helpers import Sent, find_position, snapshot_of, text_of

from buraco_p2p.engine import Discard, HandState, LayDown, LocalTable, Match, Phase, team_of
from buraco_p2p.play.line import Staging, sorted_hand
from buraco_p2p.rules import get_preset
from buraco_p2p.ui import Client, render
from buraco_p2p.ui.keys import press
from buraco_p2p.ui.panels import help_panel
from buraco_p2p.ui.table_screen import Screen

CLASSIC = get_preset("classic")
Meld = tuple[int, ...]


def _short_melds(t: LocalTable) -> list[tuple[Meld, int]]:
    """Legal three-card melds of seat 0 that stay under its side's opening minimum alone."""
    v = t.views[0]
    if t.referee.turn != 0 or t.referee.phase is not Phase.PLAY or v.opened[team_of(0)]:
        return []
    out = []
    for combo in itertools.combinations(v.hands[0], 3):
        move = LayDown(0, (combo,))
        if v.check(move) is None:
            trial = v.copy()
            trial.push(move)
            if trial.opening:
                out.append((combo, trial.opening_points()))
    return out


def _pair(t: LocalTable) -> tuple[Meld, Meld] | None:
    """Two disjoint short melds that open together."""
    v = t.views[0]
    for (a, _), (b, _) in itertools.combinations(_short_melds(t), 2):
        if set(a) & set(b):
            continue
        move = LayDown(0, (a, b))
        if v.check(move) is None:
            trial = v.copy()
            trial.push(move)
            if trial.opened[team_of(0)]:
                return a, b
    return None


def _client(pred: object) -> tuple[Client, Sent, LocalTable]:
    table, match = find_position(CLASSIC, pred)  # type: ignore[arg-type]
    sent = Sent()
    return Client(snapshot_of(table, match), sent), sent, table


def _one_short(t: LocalTable) -> bool:
    return bool(_short_melds(t))


def test_a_short_meld_is_staged_not_sent_and_u_and_escape_take_it_back() -> None:
    c, sent, table = _client(_one_short)
    meld, pts = _short_melds(table)[0]
    need = table.views[0].initial_minimum(team_of(0), 0)
    assert c.staging()
    c.selected = list(meld)
    press(c, "m")
    assert sent.moves == [] and c.confirm is None
    assert c.staged == [meld] and c.selected == []
    staged = c.staged_opening()
    assert staged is not None and (staged.points, staged.need) == (pts, need)
    text = text_of(render(c, 80, 24, 0.0))
    assert f"opening so far: {pts} of {need} (not sent: u or Esc takes it back)" in text
    lines = text.splitlines()
    y = next(i for i, line in enumerate(lines) if line.startswith(" Hand "))
    assert lines[y + 1].count("ss") == 3
    # u takes the meld back (its cards selected again); m stages it again; Esc clears all.
    press(c, "u")
    assert c.staged == [] and sorted(c.selected) == sorted(meld)
    assert "opening so far" not in text_of(render(c, 80, 24, 0.0))
    press(c, "m")
    assert c.staged == [meld]
    press(c, "escape")
    assert c.staged == [] and c.selected == [] and sent.moves == []


def test_the_staged_melds_go_as_one_lay_down_once_they_reach_the_minimum() -> None:
    c, sent, table = _client(lambda t: _pair(t) is not None)
    pair = _pair(table)
    assert pair is not None
    a, b = pair
    c.selected = list(a)
    press(c, "m")
    assert sent.moves == [] and c.staged == [a]
    c.selected = list(b)
    press(c, "m")
    assert sent.moves == [LayDown(0, (a, b))]  # one move: both melds open the side together
    assert c.staged == [] and c.confirm is None
    table.push(sent.moves[0])
    assert table.views[0].opened[team_of(0)]


def test_a_failed_attempt_is_sent_only_once_confirmed_with_the_penalty_in_two_lines() -> None:
    c, sent, table = _client(_one_short)
    meld, pts = _short_melds(table)[0]
    view = table.views[0]
    side = team_of(0)
    higher = view.rules.initial_meld_minimum(
        view.setup.team_scores[view.score_index[0]], view.failed[side] + 1
    )
    c.selected = list(meld)
    press(c, "m")
    press(c, "m")  # nothing more selected: send the staged melds short of the minimum?
    assert c.confirm is not None and sent.moves == []
    question = c.confirm[0]
    assert f"{pts} of" in question and "failed attempt" in question and str(higher) in question
    # The whole question reads on two lines at 80 columns, nothing cut.
    rows = Screen(c, 80, 24, 0.0).message_rows()
    assert len(rows) == 2 and "…" not in text_of(rows)
    assert " ".join(text_of(rows).split()) == " ".join(question.split())
    press(c, "n")
    assert sent.moves == [] and c.staged == [meld]
    press(c, "m")
    press(c, "y")
    assert sent.moves == [LayDown(0, (meld,))]


def test_a_discard_with_melds_staged_asks_first_and_the_staging_ends_with_the_turn() -> None:
    c, sent, table = _client(_one_short)
    meld, _ = _short_melds(table)[0]
    c.selected = list(meld)
    press(c, "m")
    other = next(s for s in c.hand() if s not in meld)
    c.selected = [other]
    press(c, "x")
    assert c.confirm is not None and "never sent" in c.confirm[0] and sent.moves == []
    assert len(text_of(Screen(c, 80, 24, 0.0).message_rows()).splitlines()) <= 2
    press(c, "y")
    assert sent.moves == [Discard(0, other)]
    table.push(sent.moves[0])
    c.sent(None)
    c.update(snapshot_of(table, Match(CLASSIC, 0)))
    assert c.staged == [] and not table.views[0].failed[team_of(0)]


def test_the_help_lists_the_staged_mark() -> None:
    c, _, _ = _client(_one_short)
    screen = Screen(c, 80, 24, 0.0)
    pages = []
    for page in range(6):
        c.panel_page = page
        pages.append(text_of(help_panel(screen)))
    assert any(" ss " in p and "staged toward your side's opening" in p for p in pages)


# ---------------------------------------------------------------------- line mode


def _numbers(view: HandState, slots: Meld) -> str:
    hand = sorted_hand(view, 0)
    return " ".join(str(hand.index(s) + 1) for s in slots)


def test_line_mode_stages_short_melds_and_undo_takes_them_back() -> None:
    table, _ = find_position(CLASSIC, _one_short)
    view = table.views[0]
    meld, pts = _short_melds(table)[0]
    need = view.initial_minimum(team_of(0), 0)
    st = Staging()
    answer = st.command(f"meld {_numbers(view, meld)}", view, 0)
    assert answer is not None and answer[0] is None  # nothing sent
    assert f"opening so far: {pts} of {need}" in answer[1] and st.melds == [meld]
    assert f"opening so far: {pts} of {need}" in st.describe(view, 0)
    answer = st.command("undo", view, 0)
    assert answer is not None and answer[0] is None and st.melds == []
    st.command(f"meld {_numbers(view, meld)}", view, 0)
    answer = st.command("undo all", view, 0)
    assert answer == (None, "every staged meld taken back: nothing was sent")
    assert st.melds == [] and st.describe(view, 0) == ""


def test_line_mode_sends_one_lay_down_at_the_minimum_and_a_short_one_on_yes() -> None:
    table, _ = find_position(CLASSIC, lambda t: _pair(t) is not None)
    view = table.views[0]
    pair = _pair(table)
    assert pair is not None
    a, b = pair
    st = Staging()
    assert st.command(f"meld {_numbers(view, a)}", view, 0) is not None
    answer = st.command(f"meld {_numbers(view, b)}", view, 0)
    assert answer == (LayDown(0, (a, b)), "") and st.melds == []
    # Short of it: `meld` alone asks, in two lines of at most 80 columns; yes sends.
    st.command(f"meld {_numbers(view, a)}", view, 0)
    answer = st.command("meld", view, 0)
    assert answer is not None and answer[0] is None and "failed attempt" in answer[1]
    assert [len(line) <= 80 for line in answer[1].splitlines()] == [True, True]
    assert st.command("no", view, 0) == (None, "not sent") and st.melds == [a]
    st.command("meld", view, 0)
    assert st.command("yes", view, 0) == (LayDown(0, (a,)), "")


def test_line_mode_asks_before_a_discard_with_melds_staged() -> None:
    table, _ = find_position(CLASSIC, _one_short)
    view = table.views[0]
    meld, _ = _short_melds(table)[0]
    st = Staging()
    st.command(f"meld {_numbers(view, meld)}", view, 0)
    other = next(s for s in view.hands[0] if s not in meld)
    answer = st.command(f"discard {_numbers(view, (other,))}", view, 0)
    assert answer is not None and answer[0] is None and "never sent" in answer[1]
    assert st.command("yes", view, 0) == (Discard(0, other), "")
