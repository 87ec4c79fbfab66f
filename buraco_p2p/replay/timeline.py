"""The match as a row of frames to step through, growing as the log is found good.

A frame is one moment of the match: a deal (`DEAL`, the first screen of each hand), the table
after each move (`MOVE`), the end of a scored hand (`OVER`: the hand-over panel), a deal that
ended otherwise (`STOP`: voided, abandoned, cut short by the end of the log or by a bad entry,
never dealt), and the end (`END`: the score's story). Each hand's frames are added once the
log is settled good past that hand's last entry (`advance`), so nothing is shown that `verify`
has not checked; `conclude` adds the end with `verify`'s verdict. Every frame can be drawn from
any point of view (a seat, or `FACE_UP`), each deal told on demand (`telling`) and kept.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

from buraco_p2p.audit import render_text
from buraco_p2p.engine import HandResult, HandState, match_sides
from buraco_p2p.replay.record import HandRecord, Walker
from buraco_p2p.replay.telling import FACE_UP, Told, deal_lines, names_for, tell_hand
from buraco_p2p.text.glyphs import Glyphs

__all__ = ["FACE_UP", "Frame", "Kind", "Timeline"]


class Kind(enum.Enum):
    DEAL = "deal"
    MOVE = "move"
    OVER = "over"
    STOP = "stop"
    END = "end"


@dataclass(frozen=True, slots=True)
class Frame:
    """`hand` indexes the walker's deals (-1 for the end); `k` is the moves made."""

    kind: Kind
    hand: int
    k: int = 0


class Timeline:
    """The frames of a match log, its verdict once known, and each deal told as asked."""

    def __init__(self, walker: Walker, glyphs: Glyphs) -> None:
        self.walker = walker
        self.glyphs = glyphs
        self.frames: list[Frame] = []
        self.settled = 1  # entries found good so far (the genesis was read to start)
        self.verdict: dict[str, Any] | None = None  # `verify --json`'s document, once in
        self.code: int | None = None  # and its exit code
        self._hands_in = 0  # deals whose frames are in
        self._told: dict[tuple[int, int], Told] = {}

    # ------------------------------------------------------------------ growing

    @property
    def done(self) -> bool:
        """The verdict is in and every frame it allows is in the row."""
        return bool(self.frames) and self.frames[-1].kind is Kind.END

    def settle(self, count: int) -> None:
        """`verify` found the log's first `count` entries good."""
        self.settled = max(self.settled, count)

    def advance(self, budget: int = 1 << 30) -> bool:
        """Walk up to `budget` more settled entries and add the frames of every deal now
        settled; whether there is more to walk now."""
        w = self.walker
        w.feed(min(self.settled, w.pos + budget))
        self._add_settled()
        return w.pos < self.settled and w.refused is None

    def conclude(self, code: int, verdict: dict[str, Any]) -> None:
        """`verify`'s verdict (once every entry it accepts is settled and walked): the last
        deal ends where the log does, and the end frame follows."""
        if self.done:
            return
        self.code, self.verdict = code, verdict
        self.walker.finish()
        self._add_settled(final=True)
        self.frames.append(Frame(Kind.END, -1))

    def _add_settled(self, final: bool = False) -> None:
        hands = self.walker.hands
        while self._hands_in < len(hands):
            rec = hands[self._hands_in]
            if not (final or (rec.closed and rec.last < self.settled)):
                return
            h = self._hands_in
            if rec.setup is None:
                self.frames.append(Frame(Kind.STOP, h))
            else:
                m = len(rec.moves_at)
                self.frames.append(Frame(Kind.DEAL, h))
                self.frames.extend(Frame(Kind.MOVE, h, k) for k in range(1, m + 1))
                end = Kind.OVER if rec.result is not None else Kind.STOP
                self.frames.append(Frame(end, h, m))
            self._hands_in += 1

    # ------------------------------------------------------------------ reading a frame

    def record(self, frame: Frame) -> HandRecord | None:
        return self.walker.hands[frame.hand] if frame.hand >= 0 else None

    def told(self, hand: int, seat: int) -> Told:
        """Deal `hand` told from `seat` (`FACE_UP`: every card face up), kept for the next
        time. A deal whose keys were never opened is the same from every point of view."""
        rec = self.walker.hands[hand]
        key = (hand, seat if rec.opened else FACE_UP)
        told = self._told.get(key)
        if told is None:
            told = tell_hand(rec, key[1], self.walker.nick, self.glyphs)
            self._told[key] = told
        return told

    def view(self, frame: Frame, seat: int) -> HandState | None:
        """The hand at `frame`, from `seat` (None for a deal never dealt and the end)."""
        rec = self.record(frame)
        if rec is None or rec.setup is None:
            return None
        return self.told(frame.hand, seat).state(frame.k)

    def lines(self, i: int, seat: int) -> tuple[str, ...]:
        """What the feed said at frame `i` (from `seat`: `you` for itself)."""
        frame = self.frames[i]
        rec = self.record(frame)
        if rec is None:
            return tuple(self.walker.notices)
        if rec.setup is None:
            nick = self.walker.nick
            return deal_lines(rec, self.players, nick, names_for(nick, seat)) + tuple(rec.after)
        if frame.kind is Kind.STOP:
            return tuple(rec.after)
        if frame.kind is Kind.OVER:
            return ()
        return self.told(frame.hand, seat).lines(frame.k)

    def feed(self, i: int, seat: int, last: int | None = None) -> list[str]:
        """The feed up to frame `i`, oldest first: its `last` lines, or all of it."""
        out: list[str] = []
        for j in range(i, -1, -1):
            out[:0] = self.lines(j, seat)
            if last is not None and len(out) >= last:
                return out[-last:]
        return out

    def mover(self, i: int) -> int:
        """The seat that made frame `i`'s move (-1: not a move)."""
        frame = self.frames[i]
        if frame.kind is not Kind.MOVE:
            return -1
        rec = self.walker.hands[frame.hand]
        assert rec.public is not None
        return rec.public.moves[frame.k - 1].seat

    def scores(self, frame: Frame) -> tuple[int, ...]:
        """The match scores as the table showed them at `frame`: before the hand, and after
        it once it is counted (or a side charged)."""
        if frame.hand < 0:
            return self.walker.scores or self._zero()
        rec = self.walker.hands[frame.hand]
        if frame.kind in (Kind.OVER, Kind.STOP) and rec.scores is not None:
            return rec.scores
        if rec.setup is not None:
            return rec.setup.team_scores
        return self._scores_before(frame.hand)

    def _scores_before(self, hand: int) -> tuple[int, ...]:
        for rec in reversed(self.walker.hands[:hand]):
            if rec.scores is not None:
                return rec.scores
        return self._zero()

    def _zero(self) -> tuple[int, ...]:
        return (0,) * match_sides(self.walker.rules)

    def results(self, frame: Frame) -> list[HandResult]:
        """Every hand scored up to `frame` (the one it ends included), in order."""
        upto = len(self.walker.hands) if frame.hand < 0 else frame.hand + (
            1 if frame.kind is Kind.OVER else 0
        )  # fmt: skip
        return [r.result for r in self.walker.hands[:upto] if r.result is not None]

    @property
    def players(self) -> int:
        return self.walker.rules.players

    # ------------------------------------------------------------------ what the frame says

    def why_public(self, hand: int) -> str:
        """Why a deal is shown from its public record only ("" if its keys were opened)."""
        rec = self.walker.hands[hand]
        if rec.opened:
            return ""
        n = rec.deal + 1
        if rec.voided:
            what = "abandoned" if self._walked_out(rec) else (
                "voided" if rec.voided != "end" else "ended by agreement"
            )  # fmt: skip
            return f"Hand {n} was {what} before its keys were opened: the public record only."
        if self._refused():
            return (f"Hand {n} is cut short at entry {self.verdict_index()}, the first "
                    "verify refuses: its keys were never opened, the public record only.")
        return (f"The log stops in hand {n}: its keys were never opened (the match is "
                "unfinished), the public record only.")  # fmt: skip

    @staticmethod
    def _walked_out(rec: HandRecord) -> bool:
        return any("walked out" in line for line in rec.after)

    def _refused(self) -> bool:
        return self.verdict is not None and self.verdict.get("result") in (
            "bad_entry", "verifier_failed",
        )  # fmt: skip

    def verdict_index(self) -> int | None:
        """The position `verify` names for a log it refuses."""
        return None if self.verdict is None else self.verdict.get("index")

    def verdict_line(self) -> str:
        """`verify`'s own first line for this log, once its verdict is in."""
        if self.verdict is None:
            return ""
        return render_text(self.verdict).splitlines()[0]

    def note(self, i: int) -> str:
        """The message a frame carries: why a deal is shown as it is, how the log ends."""
        frame = self.frames[i]
        if frame.kind is Kind.END:
            return self.verdict_line()
        rec = self.walker.hands[frame.hand]
        if rec.setup is None:
            return self.why_undealt(rec)
        return self.why_public(frame.hand)

    def why_undealt(self, rec: HandRecord) -> str:
        """Why a deal has no cards to show: it stopped before its deal was complete."""
        n = rec.deal + 1
        if rec.voided:
            how = "abandoned" if self._walked_out(rec) else (
                "voided" if rec.voided != "end" else "ended by agreement"
            )  # fmt: skip
            return f"Hand {n} was {how} before its deal was complete: no card was shown."
        if self._refused():
            return (f"The log is refused at entry {self.verdict_index()}, before hand {n} "
                    "was dealt.")  # fmt: skip
        return f"The log stops before hand {n} was dealt."

    # ------------------------------------------------------------------ moving through it

    def turn_starts(self) -> list[int]:
        """The frames that begin a turn: a seat's first move, and every frame not a move."""
        out: list[int] = []
        prev = -2
        for i in range(len(self.frames)):
            who = self.mover(i)
            if who == -1 or who != prev:
                out.append(i)
            prev = who
        return out

    def hand_starts(self) -> list[int]:
        return [i for i, f in enumerate(self.frames)
                if i == 0 or f.hand != self.frames[i - 1].hand]  # fmt: skip

    def next_turn(self, i: int) -> int:
        return self._after(self.turn_starts(), i)

    def prev_turn(self, i: int) -> int:
        return self._before(self.turn_starts(), i)

    def next_hand(self, i: int) -> int:
        return self._after(self.hand_starts(), i)

    def prev_hand(self, i: int) -> int:
        return self._before(self.hand_starts(), i)

    def _after(self, starts: list[int], i: int) -> int:
        """The first of `starts` after frame `i` (else the last frame)."""
        return next((j for j in starts if j > i), len(self.frames) - 1)

    @staticmethod
    def _before(starts: list[int], i: int) -> int:
        """The last of `starts` before frame `i` (else the first frame)."""
        return max((j for j in starts if j < i), default=0)

    def first_of(self, deal: int) -> int | None:
        """The first frame of deal number `deal` (from 0), if it is in."""
        return next((i for i, f in enumerate(self.frames)
                     if f.hand >= 0 and self.walker.hands[f.hand].deal == deal), None)  # fmt: skip
