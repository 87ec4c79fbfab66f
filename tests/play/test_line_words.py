"""Line mode, as a person at an 80-column terminal uses it: the help fits 79 columns, `pile`
shows the whole pile top first with every meld, a hand's result comes with each side's
breakdown, and a finished match says where its log is kept (in the data directory's
`logs/`) with the commands that audit and replay it, each on a line of its own."""

from __future__ import annotations

from pathlib import Path

import trio

from buraco_p2p.cards import face_of
from buraco_p2p.engine import LocalTable, Match
from buraco_p2p.play.line import HELP, describe_event, render_pile
from buraco_p2p.play.local import finished_lines
from buraco_p2p.rules import get_preset
from buraco_p2p.session import HandEnded
from tests.ui.agreement_helpers import seen_by, silent_table
from tests.ui.ui_helpers import positions

US = get_preset("us")


def test_the_help_fits_79_columns_and_names_pile() -> None:
    lines = HELP.splitlines()
    assert max(len(line) for line in lines) <= 79
    assert any(line.startswith("pile ") for line in lines)


def _ended() -> tuple[LocalTable, Match]:
    for table, match in positions(US, 3):
        if table.ended:
            return table, match
    raise AssertionError("no hand ended")


def test_pile_shows_the_whole_pile_top_first_and_every_meld() -> None:
    for table, _ in positions(US, 3):
        if len(table.referee.pile) >= 5:
            break
    view = table.views[0]
    text = render_pile(view, ["Ana", "Bia", "Caio", "Duda"])
    first = text.splitlines()[0]
    top = str(face_of(view.card(view.pile[-1]), view.n))  # type: ignore[arg-type]
    assert first.startswith(f"pile, top first ({len(view.pile)} cards): {top} "), first
    assert "side 0 (Ana, Caio):" in text and "side 1 (Bia, Duda):" in text


def test_a_hands_result_comes_with_each_sides_breakdown() -> None:
    table, _ = _ended()
    result = table.result()
    text = describe_event(HandEnded(result), ["Ana", "Bia", "Caio", "Duda"], None, str)
    assert text is not None
    lines = text.splitlines()
    assert lines[0] == "hand over:" and len(lines) == 1 + len(result.sides)
    assert lines[1].startswith("  Ana and Caio ") and "melds (card points) +" in lines[1]


def test_a_finished_match_says_where_its_log_is_and_how_to_audit_and_replay_it(
    tmp_path: Path,
) -> None:
    r = silent_table()

    async def main() -> list[str]:
        async with trio.open_nursery() as nursery:
            driver, _ = seen_by(r, nursery, tmp_path)
            said = finished_lines(driver, tmp_path / "data")
            nursery.cancel_scope.cancel()
        return said

    said = trio.run(main)
    kept = list((tmp_path / "data" / "logs").glob("*.log"))
    assert len(kept) == 1 and kept[0].stat().st_size > 0
    assert said[0] == "the match is over" and said[1] == f"its log is kept in {kept[0]}"
    assert said[2] == "audit it with:" and said[3].endswith(f" verify {kept[0]}")
    assert said[4] == "replay it with:" and said[5].endswith(f" replay {kept[0]}")
