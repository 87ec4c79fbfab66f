"""The replay's model on a real two-hand match: its frames, every card as dealt, and the feed's
words from each seat exactly as that seat's table gave them while the match was played."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest
from replay_helpers import live_match, selfplay_args

from buraco_p2p.cli import main
from buraco_p2p.engine import LocalTable
from buraco_p2p.logfile import decode_log, encode_log
from buraco_p2p.replay.command import Opened, check_now, open_log
from buraco_p2p.replay.timeline import FACE_UP, Kind, Timeline
from buraco_p2p.session import replay


def opened(path: Path, **options: object) -> Opened:
    args = argparse.Namespace(logfile=str(path), seat=None, hand=None, ascii=False, jobs="1",
                              line=True, **options)  # fmt: skip
    o = open_log(args)
    check_now(o)
    return o


@pytest.fixture(scope="module")
def log_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("replay") / "match.log"
    path.write_bytes(live_match().log)
    return path


@pytest.fixture(scope="module")
def timeline(log_path: Path) -> Timeline:
    return opened(log_path).timeline


def test_the_live_match_is_selfplays(tmp_path: Path) -> None:
    path = tmp_path / "selfplay.log"
    assert main(selfplay_args(str(path))) == 0
    assert path.read_bytes() == live_match().log


def test_the_frames_are_every_deal_every_move_every_end_and_the_end(timeline: Timeline) -> None:
    rep = replay(decode_log(live_match().log))
    kinds = [f.kind for f in timeline.frames]
    assert timeline.done and timeline.code == 0 and timeline.verdict is not None
    assert kinds[0] is Kind.DEAL and kinds[-1] is Kind.END
    hands = timeline.walker.hands
    assert len(hands) == rep.hands == 2
    assert [h.cards for h in hands] == list(rep.opened)
    moves = [len(h.moves_at) for h in hands]
    assert kinds.count(Kind.MOVE) == sum(moves) and kinds.count(Kind.OVER) == 2
    assert [h.scores for h in hands][-1] == rep.scores
    assert kinds.index(Kind.OVER) == moves[0] + 1


def test_face_up_every_frame_is_the_referees_table(timeline: Timeline) -> None:
    """The state at each move, face up, is the referee's: every hand, the stock, the pile
    and the melds, with every card known."""
    for h, rec in enumerate(timeline.walker.hands):
        assert rec.setup is not None and rec.cards is not None and rec.public is not None
        local = LocalTable(rec.setup, rec.cards)
        told = timeline.told(h, FACE_UP)
        for k, move in enumerate([None, *rec.public.moves]):
            if move is not None:
                local.push(move)
            state = told.state(k)
            ref = local.referee
            assert state.hands == ref.hands and state.stock == ref.stock
            assert state.pile == ref.pile and state.known == ref.known
            assert state.state_hash() == ref.state_hash()


def test_each_seat_is_told_its_feeds_words_at_the_table(timeline: Timeline) -> None:
    live = live_match()
    for party, feed in live.feeds.items():
        seat = live.seating.index(party)
        told = [timeline.told(h, seat) for h in range(len(timeline.walker.hands))]
        replayed = [t.lines(k) for t in told for k in range(1, len(t))]
        assert replayed == feed, party
    assert any(line.startswith("you drew 1 card from the stock: ") for f in live.feeds.values()
               for lines in f for line in lines)  # fmt: skip


def test_a_seat_knows_only_its_own_cards_and_those_shown(timeline: Timeline) -> None:
    for h in range(len(timeline.walker.hands)):
        for seat in range(4):
            told = timeline.told(h, seat)
            for k in range(len(told)):
                state = told.state(k)
                for other in range(4):
                    for slot in state.hands[other]:
                        known = state.known[slot] >= 0
                        if other != seat:
                            assert known == (slot in state.public), (h, seat, k, slot)
                if not state.ended:
                    unknown = [s for s in state.hands[seat] if state.known[s] < 0]
                    # a pot taken by a discard is looked at once the seat before has played
                    assert len(unknown) in (0, 11), (h, seat, k, unknown)


def test_the_feed_at_a_move_ends_with_its_words(timeline: Timeline) -> None:
    i = 10  # the deal, then ten moves
    frame = timeline.frames[i]
    assert frame.kind is Kind.MOVE and frame.k == 10
    words = timeline.lines(i, FACE_UP)
    assert words and timeline.feed(i, FACE_UP, 3)[-len(words) :] == list(words)[-3:]
    deal = timeline.lines(0, 2)
    assert deal[-1].startswith("hand 1 dealt by ") and deal[0] == "shuffle 1/4 verified (" + (
        timeline.walker.nick(0) + ")"
    )  # fmt: skip


def test_moving_by_turn_and_by_hand(timeline: Timeline) -> None:
    tl = timeline
    t = tl.next_turn(0)
    assert tl.frames[t].kind is Kind.MOVE and t == 1
    t2 = tl.next_turn(t)
    assert tl.mover(t2) != tl.mover(t) and all(tl.mover(j) == tl.mover(t) for j in range(t, t2))
    assert tl.prev_turn(t2) == t
    second = tl.next_hand(0)
    assert tl.frames[second].kind is Kind.DEAL and tl.frames[second].hand == 1
    assert tl.prev_hand(second) == 0 and tl.prev_hand(second + 5) == second
    assert tl.next_hand(second) == len(tl.frames) - 1  # the end


def test_a_log_cut_mid_hand_is_told_from_the_public_record(tmp_path: Path) -> None:
    wires = decode_log(live_match().log)
    path = tmp_path / "cut.log"
    path.write_bytes(encode_log(wires[:300]))
    tl = opened(path).timeline
    assert tl.code == 4 and tl.verdict is not None and tl.verdict["result"] == "unfinished"
    (rec,) = tl.walker.hands
    assert not rec.opened and rec.result is None
    told = tl.told(0, 2)
    assert told.public_only and tl.told(0, FACE_UP) is told
    last = told.state(len(told) - 1)
    for seat in range(4):  # nothing is known of a hand but what was shown to everyone
        assert all(last.known[s] < 0 or s in last.public for s in last.hands[seat])
    stop = tl.frames[-2]
    assert stop.kind is Kind.STOP
    assert "The log stops in hand 1" in tl.note(len(tl.frames) - 2)
    assert "keys were never opened" in tl.note(len(tl.frames) - 2)
