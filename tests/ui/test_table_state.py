"""The header's live state and the end of a hand, drawn from snapshots (no terminal): each
side's points on the table, the match score in one order on every screen, no overlap at
four-digit scores, and a per-side breakdown of an ended hand with who deals next."""

from __future__ import annotations

import dataclasses

from ui_helpers import Sent, find_position, positions, snapshot_of, text_of

from buraco_p2p.engine import LayDown, LocalTable
from buraco_p2p.rules import get_preset
from buraco_p2p.text.narration import meld_points
from buraco_p2p.ui import Client, render

CLASSIC = get_preset("classic")


def screen(c: Client, cols: int = 80, rows: int = 24) -> str:
    return text_of(render(c, cols, rows, now=0.0))


def _table_points(status: str, name: str) -> str:
    return status.split(name + " ", 1)[1].split()[1]


def test_the_header_shows_each_sides_points_on_the_table_and_they_grow_with_a_meld() -> None:
    seen = 0
    before: str | None = None
    for table, match in positions(CLASSIC, 4):
        view = table.views[0]
        status = screen(Client(snapshot_of(table, match), Sent())).splitlines()[1]
        if before is not None and view.moves and isinstance(view.moves[-1], LayDown):
            side = view.side_of(view.moves[-1].seat)
            name = "Us" if side == view.side_of(0) else "Them"
            assert _table_points(status, name) == f"+{meld_points(view, side)}"
            if meld_points(view, side) > 0:
                assert _table_points(before, name) != _table_points(status, name), status
                seen += 1
        before = status
        if table.ended:
            break
    assert seen >= 1


def test_the_match_score_is_in_the_same_order_on_every_screen_and_never_overlaps() -> None:
    table, match = find_position(CLASSIC, lambda t: t.referee.turn == 1)
    for me in (0, 1):
        snap = snapshot_of(table, match, me=me)
        snap = dataclasses.replace(snap, scores=(2095, 1840))
        for cols in (80, 120):
            status = screen(Client(snap, Sent()), cols).splitlines()[1]
            assert status.lstrip().startswith("Us "), status  # your side first
            mine = 2095 if me % 2 == 0 else 1840
            theirs = 1840 if mine == 2095 else 2095
            assert status.index(f"Us {mine}") < status.index(f"Them {theirs}")
            assert "/ 2000" in status and "turn" in status
            assert f"/ 2000{' '}" in status or "… " in status  # a gap before the turn marker


def test_the_end_of_a_hand_breaks_down_each_side_and_names_the_next_dealer() -> None:
    table, match = find_position(CLASSIC, lambda t: t.ended)
    result = table.result()
    match.record(result)
    snap = snapshot_of(table, match, history=(result,))
    snap = dataclasses.replace(snap, scores=tuple(match.scores), next_dealer=match.dealer)
    for cols, rows in ((80, 24), (120, 40)):
        text = screen(Client(snap, Sent()), cols, rows)
        assert "Hand 1 is over" in text
        for label in ("melds (card points)", "buracos", "going out", "cards left in hand",
                      "pot ", "cards left (count)", "hand total", "match total"):
            assert label in text, (label, text)
        total = next(line for line in text.splitlines() if "match total" in line)
        assert total.split()[-2:] == [str(match.scores[0]), str(match.scores[1])]
        dealer = snap.seats[match.dealer].nick
        assert f"Next hand: {dealer} deals." in text or "Next hand: you deal." in text
        assert "Enter next hand" in text


def test_refusals_use_the_screens_glyphs_and_no_internal_tags() -> None:
    from buraco_p2p.engine import IllegalMove, IllegalMoveCode
    from buraco_p2p.text.glyphs import Glyphs
    from buraco_p2p.text.words import explain

    table, _ = find_position(CLASSIC, lambda t: t.referee.turn == 0)
    view = table.views[0]
    slot = view.hands[0][0]
    err = IllegalMove(IllegalMoveCode.ILLEGAL_MELD, f"4C 5C TH do not meld; slot {slot} either")
    fancy = explain(err, view, Glyphs())
    plain = explain(err, view, Glyphs(ascii=True))
    face = Glyphs().card(view.known[slot])
    assert "4♣ 5♣ T♥" in fancy and f"{face} either" in fancy and "slot" not in fancy
    assert "4C 5C TH" in plain
    nomeld = IllegalMove(IllegalMoveCode.NO_SUCH_MELD, "no meld 7")
    assert "[" not in explain(nomeld, view) and "no_such_meld" not in explain(nomeld, view)


def test_one_meld_is_not_counted_as_melds() -> None:
    table, match = find_position(CLASSIC, lambda t: len(t.referee.melds[0]) == 1)
    text = screen(Client(snapshot_of(table, match), Sent()))
    assert "1 meld," in text and "1 melds" not in text


def test_a_short_word_after_brc_is_not_read_as_an_invite_version() -> None:
    import pytest

    from buraco_p2p.net.reach.invite import Invite, InviteTruncatedError

    with pytest.raises(InviteTruncatedError, match="not a whole invite code") as err:
        Invite.from_text("BRC-HELLO")
    assert "version" not in str(err.value)


def test_the_feed_has_the_rows_the_melds_do_not_need_marks_a_cut_and_grows_with_the_terminal(
) -> None:
    from buraco_p2p.ui import ChatLine, Panel

    table, match = find_position(CLASSIC, lambda t: t.referee.turn == 0)
    lines = tuple(ChatLine(None, f"line {i} " + "word " * (30 if i == 9 else 2)) for i in range(10))
    snap = dataclasses.replace(snapshot_of(table, match), chat=lines)
    c = Client(snap, Sent())
    small = screen(c)
    # Two melds on the table: nine rows of feed at 80x24, not three.
    assert "line 1 " in small and "line 2 " in small and "line 0 " not in small
    long = next(row for row in small.splitlines() if "line 9 " in row)
    assert long.rstrip().endswith("…") and len(long) == 80
    big = screen(c, 120, 40)
    assert "line 0 " in big  # every line at 40 rows
    rows = big.splitlines()
    assert rows.index(" line 0 word word".ljust(120)) == rows.index(next(
        r for r in rows if r.startswith(" Stock "))) + 1  # no empty feed rows above them
    more = dataclasses.replace(snap, chat=lines * 4)  # the table full of melds: three rows
    table, match = find_position(CLASSIC, lambda t: sum(len(m) for m in t.referee.melds) >= 12)
    full = Client(dataclasses.replace(snapshot_of(table, match), chat=more.chat), Sent())
    assert sum(1 for row in screen(full).splitlines() if row.startswith(" line ")) == 3
    c.toggle_panel(Panel.CHAT)
    whole = screen(c)
    assert whole.count("word") == 2 * 9 + 30  # every line whole in the feed panel


def test_the_table_says_whom_it_waits_for_and_past_the_limit_offers_end_void_replace() -> None:
    from buraco_p2p.ui.keys import Outcome, press

    table, match = find_position(CLASSIC, lambda t: t.referee.turn == 1)
    snap = dataclasses.replace(snapshot_of(table, match), waiting=("Bia",), waiting_since=0.0,
                               wait_limit=120.0)  # fmt: skip
    c = Client(snap, Sent())
    assert "Waiting for Bia" not in text_of(render(c, 80, 24, now=1.0))  # a short wait: quiet
    waiting = text_of(render(c, 80, 24, now=42.0))
    # The limit is stated, and what opens once it is past.
    assert "Waiting for Bia 0:42 of 2:00: then E end · V void · R replace" in waiting
    press(c, "E")
    assert c.confirm is None and c.message is not None
    assert "past its limit (2:00)" in c.message.text and "waiting for Bia" in c.message.text
    # Bia is back: the words about her wait go with it.
    c.update(dataclasses.replace(snap, waiting=(), version=snap.version + 1))
    assert c.message is None
    press(c, "E")
    assert c.message is not None and "waiting for" not in c.message.text
    press(c, "escape")
    c.update(dataclasses.replace(snap, timed_out=True, version=snap.version + 1))
    late = text_of(render(c, 80, 24, now=130.0))
    assert "Waiting for Bia 2:10" in late and "E end · V void · R replace" in late
    for key, words in (("E", "End the match now without Bia"),
                       ("V", "Void this hand: it is dealt again"),
                       ("R", "Seat bots for Bia")):  # fmt: skip
        press(c, key)
        assert c.confirm is not None and words in c.confirm[0]
        shown = " ".join(text_of(render(c, 80, 24, now=130.0)).split())
        assert words in shown and "agrees, n not." in shown  # the whole question, two lines
        if key == "R":
            assert press(c, "y") is Outcome.AGREE and c.agree_action == "replace"
        else:
            press(c, "n")
            assert c.confirm is None and c.agree_action == ""


def test_the_end_of_the_match_shows_a_final_table_with_the_winner() -> None:
    table, match = find_position(CLASSIC, lambda t: t.ended)
    result = table.result()
    snap = snapshot_of(table, match, history=(result,))
    snap = dataclasses.replace(snap, scores=(2150, 1320), match_over=True, winner=0)
    text = screen(Client(snap, Sent()), 80, 24)
    assert "Final scores after 1 hand:" in text
    first = next(line for line in text.splitlines() if "  1. " in line)
    second = next(line for line in text.splitlines() if "  2. " in line)
    assert "Us" in first and "2150" in first and "winner" in first
    assert "Them" in second and "1320" in second and "winner" not in second


def test_quitting_before_the_final_scores_are_signed_asks_first() -> None:
    from buraco_p2p.ui.keys import Outcome, press

    table, match = find_position(CLASSIC, lambda t: t.ended)
    snap = dataclasses.replace(snapshot_of(table, match, history=(table.result(),)),
                               match_over=True, winner=0, signed=False)  # fmt: skip
    c = Client(snap, Sent())
    assert press(c, "q") is Outcome.NONE
    assert c.confirm is not None and "before the final scores are signed" in c.confirm[0]
    assert press(c, "y") is Outcome.QUIT
    c.update(dataclasses.replace(snap, signed=True, version=snap.version + 1))
    assert press(c, "q") is Outcome.QUIT  # signed: nothing is lost by leaving


def test_a_sides_meld_head_fits_the_box_with_its_buracos_and_pot_at_80_columns() -> None:
    """Both sides with a buraco and their pot taken: each head says its points count the
    buracos and that the pot is taken, whole, inside the meld box of an 80x24 screen."""

    def both(table: LocalTable) -> bool:
        view = table.views[0]
        return all(view.team_pot[s] >= 0 and any(tm.meld.bonus for tm in view.melds[s])
                   for s in (0, 1))  # fmt: skip

    table, match = find_position(CLASSIC, both)
    shown = screen(Client(snapshot_of(table, match), Sent()))
    heads = [row.split("│")[1].rstrip() for row in shown.splitlines()
             if row.count("│") == 2 and " pts with buracos" in row]  # fmt: skip
    assert len(heads) == 2, shown
    for head in heads:
        assert head.endswith((" · pot taken", " · pot")), shown
        assert "opened" not in head  # its melds say it
