"""The line-mode table: a whole match played by typing, over a session driver.

Shown after every change that matters: whose turn it is, the pile's top card and size, the
stock's size, every side's melds (numbered per side from 1, `add` takes that number), and our
hand, sorted by suit then rank, each card with the number `meld`, `add` and `discard` take
(its name, `AD`, does as well). Every move at the table is told as it happens, in the words of
`buraco_p2p.text.narration` (the full screen's words).

Commands (`help` prints them):

    draw              draw from the stock
    take [N ...]      take the pile (N ...: hand cards that justify the top card)
    up                turn the hand's first card face up and draw another (where
                      the rules allow; draw it first)
    meld N N [/ N ..] lay down one or more melds (/ between them); before your side
                      opens, melds short of the minimum are staged, not sent, and
                      go down together once they reach it (meld alone: send them
                      short)
    undo [all]        take back the last staged meld (all: every one)
    yes | no          answer a question
    add M N [N ...]   add hand cards to your side's meld M (melds count from 1)
    discard N         discard a hand card (ends the turn)
                      (a card is its number in the hand or its name: AD, TH, JK)
    pile              the whole discard pile, top first, and every meld
    say TEXT          chat to the table
    show              show the table again
    who               the seats, and how our link to each was made
    end | void        after a timeout: agree to end the match or void the hand
    replace           after a timeout: agree that bots take the missing players'
                      seats from the hand dealt again (the host seats them)
    quit              leave (the match stays on disk: `buraco-p2p resume` returns
                      to it)
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Sequence
from typing import Protocol

from buraco_p2p.cards import CardParseError, face_of, parse_card
from buraco_p2p.engine import (
    AddToMeld,
    Discard,
    DrawStock,
    HandState,
    LayDown,
    Move,
    TakeDiscard,
    TurnUpFirst,
)
from buraco_p2p.net.reach.invite import Endpoint
from buraco_p2p.net.reach.rejoin import RejoinCodeError
from buraco_p2p.session import (
    Abandoned,
    Event,
    Fault,
    HandEnded,
    HandStarted,
    MatchEnded,
    Rewrite,
    SeatsDrawn,
    TimedOut,
    TimeUp,
    Voided,
    VoidHeld,
    VoidProposed,
)
from buraco_p2p.text.agreement import held_text, rewrite_text
from buraco_p2p.text.narration import abandoned_text, result_lines
from buraco_p2p.text.words import explain

__all__ = [
    "HELP",
    "LineError",
    "Staging",
    "describe_event",
    "parse_command",
    "render",
    "render_pile",
    "sorted_hand",
]

# The commands as the docstring lists them, at the left margin: 79 columns at most.
HELP = textwrap.dedent(__doc__.split("Commands (`help` prints them):", 1)[1]).strip("\n")


class LineError(ValueError):
    """A command that cannot be made into a move; the text says why."""


def _key(view: HandState, slot: int) -> tuple[int, int]:
    card = view.card(slot)
    if card is None:
        return (9, slot)
    face = face_of(card, view.n)
    suit = 4 if face.suit is None else int(face.suit)
    return (suit, face.rank)


def sorted_hand(view: HandState, seat: int) -> list[int]:
    """Our hand's slots, by suit then rank (jokers last): the numbers commands take."""
    return sorted(view.hand(seat), key=lambda s: _key(view, s))


def _text(view: HandState, slot: int) -> str:
    card = view.card(slot)
    return "??" if card is None else str(face_of(card, view.n))


def render(view: HandState, seat: int, names: Sequence[str]) -> str:
    """The table as text, from the view of `seat` (names by seat)."""
    lines = []
    turn = view.turn
    lines.append(f"turn: {names[turn]}, {view.phase.value}")
    top = _text(view, view.pile[-1]) if view.pile else "empty"
    n = len(view.pile)
    lines.append(f"pile: {top} ({n} card{'' if n == 1 else 's'})   stock: {len(view.stock)}")
    for side, melds in enumerate(view.melds):
        who = ", ".join(names[s] for s in range(view.players) if view.side_of(s) == side)
        shown = "  ".join(
            f"[{m}] " + " ".join(str(f) for f in tm.meld.faces) for m, tm in enumerate(melds, 1)
        )
        lines.append(f"side {side} ({who}): {shown or 'no melds'}")
    hand = sorted_hand(view, seat)
    cards = "  ".join(f"{k}:{_text(view, s)}" for k, s in enumerate(hand, 1))
    lines.append(f"your hand ({len(hand)}): {cards}")
    return "\n".join(lines)


def render_pile(view: HandState, names: Sequence[str]) -> str:
    """The whole discard pile, top first, then every side's melds in full (`pile`)."""
    cards = " ".join(_text(view, s) for s in reversed(view.pile)) or "empty"
    lines = [f"pile, top first ({len(view.pile)} card{'' if len(view.pile) == 1 else 's'}): "
             f"{cards}"]  # fmt: skip
    for side, melds in enumerate(view.melds):
        who = ", ".join(names[s] for s in range(view.players) if view.side_of(s) == side)
        lines.append(f"side {side} ({who}):")
        for m, tm in enumerate(melds, 1):
            kind = "clean" if tm.meld.clean else "dirty"
            if tm.meld.is_buraco:
                kind += " buraco"
            lines.append(f"  [{m}] {' '.join(str(f) for f in tm.meld.faces)}  "
                         f"({tm.meld.card_points} points, {kind})")  # fmt: skip
        if not melds:
            lines.append("  no melds")
    return "\n".join(lines)


def _numbers(words: Sequence[str], hand: Sequence[int], view: HandState) -> tuple[int, ...]:
    """The hand slots typed words name: a card's number in the sorted hand, or its name (`AD`;
    of two equal cards, the one not named yet)."""
    out: list[int] = []
    for w in words:
        if w.isdigit():
            if not 1 <= int(w) <= len(hand):
                raise LineError(f"{w!r} is not a card number 1..{len(hand)}")
            out.append(hand[int(w) - 1])
            continue
        try:
            face = parse_card(w)
        except CardParseError:
            raise LineError(f"{w!r} is neither a card number 1..{len(hand)} nor a card "
                            "name (AD, TH, JK)") from None  # fmt: skip
        match = [s for s in hand if _text(view, s) == str(face) and s not in out]
        if not match:
            raise LineError(f"you hold no {face} (or not that many)")
        out.append(match[0])
    if len(set(out)) != len(out):
        raise LineError("a card is named twice")
    return tuple(out)


def parse_command(line: str, view: HandState, seat: int) -> Move:
    """The move a typed line asks for (`LineError` if it makes none)."""
    words = line.split()
    if not words:
        raise LineError("empty command")
    cmd, rest = words[0].lower(), words[1:]
    hand = sorted_hand(view, seat)
    if cmd == "draw" and not rest:
        return DrawStock(seat)
    if cmd == "take":
        return TakeDiscard(seat, _numbers(rest, hand, view))
    if cmd == "up" and not rest:
        return TurnUpFirst(seat)
    if cmd == "meld":
        groups = " ".join(rest).split("/")
        melds = tuple(_numbers(g.split(), hand, view) for g in groups)
        if not all(melds):
            raise LineError("meld needs card numbers, groups separated by /")
        return LayDown(seat, melds)
    if cmd == "add" and len(rest) >= 2:
        if not rest[0].isdigit() or int(rest[0]) < 1:
            raise LineError("add M N ...: M is a meld number of your side, from 1")
        return AddToMeld(seat, int(rest[0]) - 1, _numbers(rest[1:], hand, view))
    if cmd == "discard" and len(rest) == 1:
        return Discard(seat, _numbers(rest, hand, view)[0])
    raise LineError(f"unknown command {line.strip()!r} (type help)")


class Staging:
    """Melds staged toward the opening, unsent: where a turn's melds count together and our
    side has not opened, a lay-down short of the minimum would show the cards to everyone for
    good and fail when the turn ends, so they are held here until their sum reaches the
    minimum (then sent as one lay-down) or the player asks to send them short. Sans-IO: lines
    in, (move to send, text to print) out."""

    def __init__(self) -> None:
        self.melds: list[tuple[int, ...]] = []
        self.pending: Move | None = None  # the move a question waits on (`yes` sends it)

    @staticmethod
    def active(view: HandState, seat: int) -> bool:
        side = view.side_of(seat)
        return (view.params.opening_by_turn and not view.opened[side]
                and view.initial_minimum(side, seat) > 0)  # fmt: skip

    def forget(self) -> None:
        """The turn is over: staged melds were never sent, nothing to take back."""
        self.melds = []
        self.pending = None

    def total(self, view: HandState, seat: int, melds: Sequence[tuple[int, ...]]) -> int | None:
        """Points toward the minimum with `melds` laid down (None: they would open)."""
        trial = view.copy()
        trial.push(LayDown(seat, tuple(melds)))
        return None if trial.opened[view.side_of(seat)] else trial.opening_points()

    def describe(self, view: HandState, seat: int) -> str:
        """The staged melds and their sum, or '' with none."""
        if not self.melds:
            return ""
        groups = "  ".join("[" + " ".join(_text(view, s) for s in m) + "]" for m in self.melds)
        need = view.initial_minimum(view.side_of(seat), seat)
        pts = self.total(view, seat, self.melds)
        return (f"staged, not sent: {groups}; opening so far: {pts} of {need} "
                "(undo takes back the last, undo all every one)")  # fmt: skip

    def command(self, line: str, view: HandState, seat: int) -> tuple[Move | None, str] | None:
        """A typed line on our turn, where staging has a say: the move to send (or None) and
        what to print; None for a line the console handles as usual. `LineError` as
        `parse_command` raises it."""
        words = line.split()
        cmd, rest = (words[0].lower(), words[1:]) if words else ("", [])
        pending, self.pending = self.pending, None  # any other line answers no
        if cmd in ("yes", "y"):
            if pending is None:
                return None, "there is no question to answer"
            self.melds = []
            return pending, ""
        if cmd in ("no", "n"):
            return None, "not sent" if pending is not None else "there is no question to answer"
        if not self.active(view, seat):
            self.melds = []
            return None
        if cmd == "undo":
            if not self.melds:
                return None, "nothing staged to take back"
            if rest[:1] == ["all"]:
                self.melds = []
                return None, "every staged meld taken back: nothing was sent"
            self.melds.pop()
            return None, self.describe(view, seat) or "taken back: nothing staged now"
        need = view.initial_minimum(view.side_of(seat), seat)
        if cmd == "meld" and not rest and self.melds:
            short = LayDown(seat, tuple(self.melds))
            higher = view.rules.initial_meld_minimum(
                view.setup.team_scores[view.score_index[seat]], view.failed[view.side_of(seat)] + 1
            )
            self.pending = short
            pts = self.total(view, seat, self.melds)
            return None, (f"send {pts} of {need} now? Everyone sees the cards; if the turn ends "
                          f"short, it is\na failed attempt and your minimum rises to {higher}. "
                          "yes sends, no not")  # fmt: skip
        if cmd == "meld":
            asked = parse_command(line, view, seat)
            assert isinstance(asked, LayDown)
            laid = LayDown(seat, (*self.melds, *asked.melds))
            err = view.check(laid)
            if err is not None:
                return None, f"refused: {explain(err, view)}"
            if self.total(view, seat, laid.melds) is None:
                self.melds = []
                return laid, ""
            self.melds = list(laid.melds)
            return None, self.describe(view, seat) + "; meld adds more, meld alone sends short"
        if cmd == "discard" and self.melds:
            move = parse_command(line, view, seat)
            if view.check(move) is None:
                self.pending = move
                pts = self.total(view, seat, self.melds)
                return None, (f"your staged melds ({pts} of {need}) were never sent:\nthey stay "
                              "in your hand, no penalty. Discard? yes discards, no not")
        return None


def describe_event(
    ev: Event, names: Sequence[str], view: HandState | None, nick: Callable[[int], str]
) -> str | None:
    """One line for an event worth announcing (party-indexed events use `nick`)."""
    if isinstance(ev, SeatsDrawn):
        order = ", ".join(nick(p) for p in ev.seating)
        return f"seats drawn: {order}; first dealer {names[ev.dealer]}"
    if isinstance(ev, HandStarted):
        return f"hand {ev.hand + 1} dealt (dealer {names[ev.dealer]})"
    if isinstance(ev, HandEnded):
        sides = [" and ".join(names[s] for s in seats) for seats in ev.result.sides]
        return "\n".join(["hand over:", *(f"  {x}" for x in result_lines(ev.result, sides))])
    if isinstance(ev, MatchEnded):
        scores = ", ".join(f"{_match_side(names, k, len(ev.scores))} {x}"
                           for k, x in enumerate(ev.scores))  # fmt: skip
        won = "no winner" if ev.winner is None else (
            f"{_match_side(names, ev.winner, len(ev.scores))} win")
        return f"match over: {scores}; {won}"
    if isinstance(ev, TimedOut):
        who = ", ".join(nick(p) for p in ev.parties)
        return f"waiting for {who} for {ev.waited:.0f} s"
    if isinstance(ev, VoidHeld):
        return held_text(ev, nick)
    if isinstance(ev, TimeUp):
        return f"the time is up after hand {ev.hand}: the match ends (a tied lead plays on)"
    if isinstance(ev, VoidProposed):
        who = ", ".join(nick(p) for p in ev.silent)
        return f"{nick(ev.party)} proposes: {ev.action} (missing: {who}); type {ev.action} to agree"
    if isinstance(ev, Voided):
        gone = ", ".join(nick(p) for p in ev.silent)
        if ev.action == "replace":
            return f"agreed: replace (a bot takes the seat of {gone} from the next deal)"
        return f"agreed: {ev.action} (missing: {gone})"
    if isinstance(ev, Abandoned):
        return abandoned_text(ev, nick)
    if isinstance(ev, Fault):
        return f"FAULT: {ev.error}"
    if isinstance(ev, Rewrite):
        return rewrite_text(ev, nick)
    return None


def _match_side(names: Sequence[str], k: int, sides: int) -> str:
    """A match side by its players' names (seat s scores in side s % sides)."""
    return " and ".join(n for s, n in enumerate(names) if s % sides == k)


class RejoinTaker(Protocol):
    """What takes a pasted re-join code (`Mesh.moves`, net/mesh/moving.py)."""

    def accept_code(self, text: str) -> tuple[Endpoint, ...]: ...


def take_rejoin_code(taker: RejoinTaker, text: str) -> str:
    """A pasted re-join code (`BRJ-...`, printed by a host whose address changed): its
    addresses are dialed at once; the line says so, or why the code is refused."""
    try:
        addresses = taker.accept_code(text.strip())
    except RejoinCodeError as exc:
        return f"* re-join code refused: {exc}"
    shown = ", ".join(str(ep) for ep in addresses)
    return f"* re-join code accepted: dialing the host at {shown} ..."
