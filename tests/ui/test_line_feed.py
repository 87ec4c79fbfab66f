"""Line mode at a table of bot peer processes (127.0.0.1, every proof on): the moves are told
in the full screen's words, a typo is answered as a typo (not "not your turn"), a card is named
by its name as well as its number, and melds count from 1."""

from __future__ import annotations

import re
from pathlib import Path

from tests.line_proc import LineProc


def test_line_mode_tells_the_bots_moves_and_answers_typos_and_card_names(tmp_path: Path) -> None:
    me = LineProc(["play", "--line", "--players", "2", "--rules", "classic"], tmp_path)
    try:
        me.wait_for("your move (help lists the commands)")
        me.type("fly")
        assert "unknown command 'fly'" in me.wait_for("refused:")
        me.type("draw")
        drawn = me.wait_for("you drew 1 card from the stock: ")
        card = drawn.rsplit(": ", 1)[1].strip()
        assert re.fullmatch(r"(10|[A2-9TJQK])[SHDC]|JK", card), card
        me.wait_for("your move")
        me.type(f"discard {card.lower()}")
        told = me.wait_for("you discarded ")
        assert told.strip().endswith(card), told
        # The bot's turn, told move by move: its draw (or take) and its discard.
        line = me.wait_for("bot1 discarded ")
        assert re.search(r"bot1 discarded ((10|[A2-9TJQK])[SHDC]|JK)", line), line
        me.wait_for("your move")
        me.type("discard 1")  # before drawing: the rule in words, no internal code
        said = me.wait_for("refused: ")
        assert "draw first" in said and "[" not in said and "wrong_phase" not in said, said
    finally:
        me.close()
