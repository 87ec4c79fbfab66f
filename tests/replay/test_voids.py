"""Deals whose keys were never opened (voided, abandoned, ended by agreement, a log cut short)
are told from the public record only, from every point of view, and say why."""

from __future__ import annotations

import argparse
import io
import json
from pathlib import Path
from typing import Any

import pytest

from buraco_p2p.crypto import DeterministicRandomSource
from buraco_p2p.logfile import encode_log
from buraco_p2p.replay.command import Opened, check_now, open_log
from buraco_p2p.replay.line import write_story
from buraco_p2p.replay.timeline import FACE_UP, Kind
from buraco_p2p.rules import get_preset
from buraco_p2p.session import Peer, Router, make_genesis
from tests.session.session_helpers import bot_chooser, identities, run_until

VECTORS = Path(__file__).resolve().parents[2] / "protocol" / "vectors"
CASES = json.loads((VECTORS / "session_void.json").read_text(encoding="utf-8"))["cases"]


def opened(path: Path) -> Opened:
    args = argparse.Namespace(logfile=str(path), seat=None, hand=None, ascii=False, jobs="1",
                              line=True)  # fmt: skip
    o = open_log(args)
    check_now(o)
    return o


def vector_log(case: dict[str, Any]) -> bytes:
    base = json.loads((VECTORS / case["base"]).read_text(encoding="utf-8"))["entries"]
    head = [bytes.fromhex(e["wire"]) for e in base[: case["base_entries"]]]
    return encode_log(head + [bytes.fromhex(v["wire"]) for v in case["void_entries"]])


def walked_out_mid_hand() -> bytes:
    """Four bot peers; after 30 moves of the first hand the last party goes silent and the
    others sign a void naming it: its partner's signature proves it walked out."""
    g = make_genesis(b"replay-walk-out!", identities(), get_preset("classic"), timeout_ms=1000)
    r = Router([Peer(g, i, DeterministicRandomSource(bytes([7, n]) * 16))
                for n, i in enumerate(identities())], bot_chooser(7), relay=True)  # fmt: skip
    r.start()
    t = r.peers[0].table
    run_until(r, lambda: t.view is not None and len(t.view.moves) >= 30)
    r.silent = {3}
    r.run()
    r.advance(2.0)
    for p in range(3):
        r.act(p, r.peers[p].propose_void("void", r.now, silent=(3,)))
    r.run()
    assert t.voids and t.voids[0].stage == "in_hand"
    return encode_log(e.wire for e in t.log)


@pytest.mark.parametrize("case", [c for c in CASES if c["expect"]["stage"] == "in_hand"],
                         ids=lambda c: c["name"])  # fmt: skip
def test_a_deal_voided_before_it_was_complete_says_so(case: dict[str, Any], tmp_path: Path
                                                       ) -> None:  # fmt: skip
    path = tmp_path / "void.log"
    path.write_bytes(vector_log(case))
    tl = opened(path).timeline
    first = tl.frames[0]
    assert first.kind is Kind.STOP and tl.view(first, FACE_UP) is None
    note = tl.note(0)
    assert note.startswith("Hand 1 was ") and "before its deal was complete" in note
    lines = tl.lines(0, FACE_UP)
    assert lines[0].startswith("shuffle 1/") and any("by agreement" in x for x in lines)
    if case["expect"]["proven"]:
        assert "abandoned" in note and any("walked out of hand 1" in x for x in lines)


def test_a_hand_abandoned_in_play_is_its_public_record(tmp_path: Path) -> None:
    path = tmp_path / "walked.log"
    path.write_bytes(walked_out_mid_hand())
    tl = opened(path).timeline
    rec = tl.walker.hands[0]
    assert not rec.opened and rec.voided == "void" and len(rec.moves_at) >= 30
    stop = next(i for i, f in enumerate(tl.frames) if f.kind is Kind.STOP)
    assert tl.frames[stop].hand == 0
    assert "Hand 1 was abandoned before its keys were opened" in tl.note(stop)
    assert any("walked out of hand 1" in x for x in tl.lines(stop, FACE_UP))
    for seat in (FACE_UP, 0, 3):  # every point of view is the public record
        state = tl.view(tl.frames[stop - 1], seat)
        assert state is not None
        for hand in state.hands:
            assert all(state.known[s] < 0 or s in state.public for s in hand)
        assert all(state.known[s] < 0 for s in state.stock)
    out = io.StringIO()
    write_story(tl, out)
    text = out.getvalue()
    assert "Hand 1 was abandoned before its keys were opened" in text
    assert " holds " not in text.split("== hand 2")[0]  # no hidden hand is shown
