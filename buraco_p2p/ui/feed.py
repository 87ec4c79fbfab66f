"""What the client is shown and what it may ask: the `TableFeed` interface.

The client holds no game rules and no protocol. A table, whether the practice table in this
process or a networked session, hands it snapshots (`TableSnapshot`: the seat's own engine view
and everything around it) and accepts intents (`submit(move)`, `say(text)`). The interface is
shaped by what a networked session gives: snapshots arrive whenever the table changes, not as
answers to intents; a submitted move may be refused by the table, with a reason in words
(`MoveRefused`); a card of the view is known only once it has been revealed.

A networked table fills a snapshot from its session: `view` is a copy of the seat's engine
view after each applied move and reveal (a card drawn shows once its shares are in); `seats`
come from the genesis identities (nickname, fingerprint) and the seat draw, `side` from the
view; `fairness` counts the shuffle proofs verified this hand and lists every fault the table
names, with the seat and the reason; `progress` says whose shuffle or which round is awaited
between hands; a peer's chat, a timeout or a void agreement arrive as `chat` lines (seat None
for the table's own notices); `save_log` writes the signed log and returns the command that
verifies it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from buraco_p2p.engine import HandResult, HandState, Move
from buraco_p2p.rules import RuleSet


class MoveRefused(Exception):
    """The table would not take a move. `reason` is for the player, `code` for programs."""

    def __init__(self, reason: str, code: str = "") -> None:
        super().__init__(reason)
        self.reason = reason
        self.code = code


class SaveUnavailable(Exception):
    """The table keeps no log that can be saved (`reason` says why)."""


@dataclass(frozen=True, slots=True)
class SeatInfo:
    """One seat as the table knows it.

    `side` is the side the seat plays on in this hand, now (an index of the view's per-side
    melds, pots and minimums; at three players it changes when the first pot is taken);
    `match_side` is the match score the seat's points go to (an index of
    `TableSnapshot.scores`: a team's, or the player's own at two and three). `link` says how
    the link to a networked peer was made ("direct (IPv6)", "relayed by the host", ...; empty
    for this seat and at a table without links); `connected` is False only while that link
    is really down. `bot_level` is a bot seat's level where this client started the bot.
    """

    seat: int
    nick: str
    side: int
    match_side: int
    is_bot: bool = False
    connected: bool = True
    fingerprint: str = ""
    link: str = ""
    bot_level: str = ""


@dataclass(frozen=True, slots=True)
class Complaint:
    """A cheating or fault complaint against a seat, with the table's reason."""

    seat: int
    nick: str
    reason: str


@dataclass(frozen=True, slots=True)
class Fairness:
    """How far the fairness checks of the current hand have got.

    `checked` is False at a table that deals without cryptography (the practice table): the
    client then says so instead of showing a count.
    """

    checked: bool
    shuffles_verified: int = 0
    shuffles_total: int = 0
    complaints: tuple[Complaint, ...] = ()


@dataclass(frozen=True, slots=True)
class Progress:
    """Work in progress between hands: shuffles and proofs (`seat` is who works now)."""

    stage: str
    seat: int | None
    done: int
    total: int


@dataclass(frozen=True, slots=True)
class ChatLine:
    seat: int | None  # None: the table itself speaking
    text: str


@dataclass(frozen=True, slots=True)
class Action:
    """A move made at the table, for the client's record of what just happened.

    `cards` holds the ids of the cards it showed (melded, discarded; the pile taken, top
    first), as known when it was made.
    """

    seat: int
    move: Move
    cards: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class Proposal:
    """A void agreement another party proposed that we have not signed (docs/protocol.md 4.5).

    `by` proposed `action` naming `silent` (nicknames; `named_me`: it names this player);
    `deadline` is a `time.monotonic()` reading twice the table's timeout after we first saw it:
    from then on, if we have neither agreed nor played on, the others may name us too (4.5,
    "Retries"). `blocked` says why our client cannot agree now, in words ("" if it can)."""

    by: str
    action: str
    silent: tuple[str, ...]
    deadline: float
    blocked: str = ""
    named_me: bool = False


@dataclass(frozen=True, slots=True)
class TableSnapshot:
    """Everything the client draws, as of one moment.

    `view` is this seat's engine view of the hand in play (None before the first deal);
    `scores` are the match scores, one per match side (`SeatInfo.match_side`); `history` holds
    the results of finished hands; `hand_over` is true from the end of a hand until the player
    has seen it (`ready`), the ended hand's `view` held on screen meanwhile; `turn_since` is a
    `time.monotonic()` reading of when the current turn began; `next_dealer` is the seat that
    deals the next hand, for the summary of the one just ended.
    """

    title: str
    rules: RuleSet
    me: int
    seats: tuple[SeatInfo, ...]
    view: HandState | None
    scores: tuple[int, ...]
    fairness: Fairness
    version: int = 0
    history: tuple[HandResult, ...] = ()
    hand_over: bool = False
    match_over: bool = False
    winner: int | None = None
    progress: Progress | None = None
    chat: tuple[ChatLine, ...] = ()
    actions: tuple[Action, ...] = ()
    turn_since: float = 0.0
    can_save_log: bool = False
    extra: dict[str, str] = field(default_factory=dict)
    next_dealer: int = -1  # the seat that deals the next hand (-1: not known yet)
    waiting: tuple[str, ...] = ()  # who the table waits for now (others than this player)
    waiting_since: float = 0.0  # a `time.monotonic()` reading of when that wait began
    wait_limit: float = 0.0  # seconds the table waits before E, V and R open (0: no limit)
    timed_out: bool = False  # the wait is past the table's limit: `agree` is open to us
    proposal: Proposal | None = None  # another party's void agreement we have not signed
    rules_known: bool = True  # False while a resumed or joined table's rules are not read yet
    log_saved: str = ""  # where the finished match's log was kept (its audit and replay)
    signed: bool = True  # the match's last entries are signed: leaving it now loses nothing

    def side_of(self, seat: int) -> int:
        return self.seats[seat].side

    def match_side_seats(self, match_side: int) -> tuple[int, ...]:
        return tuple(s.seat for s in self.seats if s.match_side == match_side)

    def side_seats(self, side: int) -> tuple[int, ...]:
        return tuple(s.seat for s in self.seats if s.side == side)

    @property
    def sides(self) -> tuple[int, ...]:
        """The sides in play, in order."""
        return tuple(sorted({s.side for s in self.seats}))


class TableFeed(Protocol):
    """A table as the client sees it: snapshots out, intents in.

    `next_snapshot(after)` waits for a snapshot newer than version `after` and returns the
    newest; `submit` sends one of this seat's moves and returns once the table has taken it
    (or raises `MoveRefused`); `say` sends a chat line (a networked table takes a `BRJ-`
    re-join code instead: `DriverFeed.say`); `ready` tells the table this player
    has seen the end of a hand and may be dealt the next; `skip` stops pausing between the
other players' moves until it is this player's turn again; `save_log` writes the match log to
    `path` and returns the command that audits it (or raises `SaveUnavailable`). All are
    trio functions; `snapshot()` is the current snapshot, without waiting.
    """

    def snapshot(self) -> TableSnapshot: ...

    async def next_snapshot(self, after: int) -> TableSnapshot: ...

    async def submit(self, move: Move) -> None: ...

    async def say(self, text: str) -> None: ...

    async def ready(self) -> None: ...

    async def skip(self) -> None:
        """Show the table as it is now: no pause before the moves still to be shown."""
        ...

    async def save_log(self, path: Path) -> str: ...

    async def agree(self, action: str) -> str:
        """After a timeout: agree to `end` the match, `void` the hand or `replace` the missing
        players by bots; returns what happened, in words."""
        ...

    async def run(self) -> None:
        """Drive the table until the match ends or the caller cancels."""
        ...
