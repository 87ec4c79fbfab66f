"""A `TableFeed` over a running session `Driver`: what every networked table shows.

`DriverFeed` rebuilds the client's snapshot from the session whenever the log grows (every
entry applied, ours or a peer's) and, once a second, whenever a link to a peer changes; moves
go through the driver (an illegal move is refused by the engine before anything is signed).
How it gets its driver is its subclasses' business: the practice match against bot peers
(`session_feed`), a table set up in the full-screen lobby, or a resumed table (`netplay`).

The progress between hands is read from the session's table after each entry, never guessed:
in the shuffle phase the deck counts the shuffles whose proofs have been verified and names
the next shuffler; in the deal phase the step counts the decryption-share entries verified.
Each verified shuffle is also said once in the table's feed.
"""

from __future__ import annotations

import time
from pathlib import Path

import trio

from buraco_p2p.engine import IllegalMove, Move, match_sides
from buraco_p2p.logfile import encode_log
from buraco_p2p.net.channel.identity import PeerKey
from buraco_p2p.play.driver import Driver, bot_parties, my_turn
from buraco_p2p.rules import RuleSet
from buraco_p2p.session import (
    Event,
    Fault,
    HandEnded,
    HandStarted,
    Phase,
    Table,
    TimedOut,
    TimeUp,
    Voided,
)
from buraco_p2p.ui.feed import (
    ChatLine,
    Complaint,
    Fairness,
    MoveRefused,
    Progress,
    SaveUnavailable,
    SeatInfo,
    TableSnapshot,
)

__all__ = ["DriverFeed", "ShuffleCount", "shuffle_count"]

MAX_CHAT = 50
LINK_POLL_S = 1.0
VOIDED = {
    "void": "the hand was voided by agreement: it is dealt again",
    "end": "the match was ended by agreement",
    "replace": "the missing players' seats pass to new players: the hand is dealt again",
}


class ShuffleCount:
    """Where hand `hand`'s shuffles and deal stand (-1: before the first hand): `shuffles` of
    `seats` verified, `deals` of `seats` decryption-share entries verified, `progress` for the
    screen (None once dealt)."""

    __slots__ = ("deals", "hand", "progress", "seats", "shuffles")

    def __init__(
        self, hand: int, seats: int, shuffles: int, deals: int, progress: Progress | None
    ) -> None:
        self.hand = hand
        self.seats = seats
        self.shuffles = shuffles
        self.deals = deals
        self.progress = progress


def shuffle_count(t: Table) -> ShuffleCount:
    """Read the session's table: the seat shuffling now and how many proofs are verified."""
    n = t.n
    hand = t.hand
    phase = t.phase
    done = len(t.step_hashes)
    # A hand is counted as played from its result on: the count is then the last hand's.
    number = t.hands_played - 1 if phase in (Phase.OPEN, Phase.FINAL, Phase.CLOSED) else (
        t.hands_played
    )
    if phase in (Phase.SEATS_COMMIT, Phase.SEATS_REVEAL):
        seats = Progress("drawing the seats", None, done, len(t.authors))
        return ShuffleCount(-1, n, 0, 0, seats)
    if hand is None:
        return ShuffleCount(-1, n, 0, 0, None)
    if phase is Phase.HAND_KEYS:
        return ShuffleCount(number, n, 0, 0, Progress("hand keys", None, done, len(t.authors)))
    if phase is Phase.SHUFFLE:
        nxt = hand.deck.next_shuffler
        shuffles = n if nxt is None else nxt
        return ShuffleCount(number, n, shuffles, 0, Progress("shuffling", nxt, shuffles, n))
    if phase is Phase.DEAL:
        deal = Progress("dealing: shares verified", None, done, n)
        return ShuffleCount(number, n, n, done, deal)
    return ShuffleCount(number, n, n, n, None)


class DriverFeed:
    """Snapshots of one seat at a networked table; intents through its driver."""

    def __init__(self, rules: RuleSet | None, title: str) -> None:
        self.rules = rules
        self.title = title
        self.driver: Driver | None = None
        self.bots = False  # the other seats are bot peers of ours
        # Identity keys of the bot peers this process started (a host's `--bots`): it made
        # them, so it knows; a seat whose key a `replace` changed is a bot heir for everyone.
        self.bot_keys: frozenset[bytes] = frozenset()
        self._version = 0
        self._changed = trio.Event()
        self._chat: list[ChatLine] = []
        self._complaints: list[Complaint] = []
        self._hand_over = False
        self._turn_since = time.monotonic()
        self._shuffles_said = (-1, 0)  # (hand, shuffles) last said in the feed
        self._links: tuple[tuple[bool, str], ...] = ()
        self._snapshot: TableSnapshot | None = None

    # -- the TableFeed interface ----------------------------------------------------------

    def snapshot(self) -> TableSnapshot:
        if self._snapshot is None:
            self._snapshot = self._build()
        return self._snapshot

    async def next_snapshot(self, after: int) -> TableSnapshot:
        while self.snapshot().version <= after:
            await self._changed.wait()
        return self.snapshot()

    async def submit(self, move: Move) -> None:
        d = self.driver
        if d is None or not my_turn(d.peer):
            raise MoveRefused("it is not your turn", "wrong_player")
        try:
            d.play(move)
        except IllegalMove as e:
            raise MoveRefused(e.message, e.code.value) from None
        self._publish()
        await trio.lowlevel.checkpoint()

    async def say(self, text: str) -> None:
        if self.driver is not None and text.strip():
            self.driver.chat(text.strip())
            self.line(self._my_seat(), text.strip())
        await trio.lowlevel.checkpoint()

    async def ready(self) -> None:
        self._hand_over = False
        self._publish()
        await trio.lowlevel.checkpoint()

    async def save_log(self, path: Path) -> str:
        if self.driver is None:
            raise SaveUnavailable("no match yet")
        path.write_bytes(encode_log(e.wire for e in self.driver.peer.log))
        return f"buraco-p2p verify --partial {path}"

    # -- the driver -----------------------------------------------------------------------

    def attach(self, driver: Driver) -> None:
        """Show `driver`'s table from now on (its events and chat come here)."""
        self.driver = driver
        self.rules = driver.peer.table.rules
        driver.on_events = self._on_events
        driver.on_chat = self._on_chat
        view = driver.peer.table.view
        self._hand_over = view is not None and view.ended
        self._publish()

    async def follow(self) -> None:
        """Publish a snapshot whenever the log grows or a link changes, until cancelled."""
        d = self.driver
        assert d is not None
        seen = [-1]
        while True:
            with trio.move_on_after(LINK_POLL_S):
                await d.wait_until(lambda p: len(p.log) != seen[0])
            grown = len(d.peer.log) != seen[0]
            seen[0] = len(d.peer.log)
            links = self._link_states()
            if grown or links != self._links:
                self._links = links
                self._say_shuffles()
                self._publish()

    def line(self, seat: int | None, text: str) -> None:
        """A line in the table's feed (seat None: the table itself)."""
        self._chat.append(ChatLine(seat, text[:200]))
        del self._chat[:-MAX_CHAT]
        self._publish()

    # -- internals ------------------------------------------------------------------------

    def _my_seat(self) -> int:
        d = self.driver
        seat = d.peer.table.my_seat if d is not None else None
        return 0 if seat is None else seat

    def _on_chat(self, key: PeerKey, text: str) -> None:
        d = self.driver
        if d is None:
            return
        t = d.peer.table
        keys = [k.raw for k in t.terms.keys]
        party = keys.index(key.raw) if key.raw in keys else None
        seat = t.party_seat[party] if party is not None and t.party_seat else None
        self.line(seat, text)

    def _nick(self, seat: int) -> str:
        d = self.driver
        if d is None or not d.peer.table.seating:
            return f"seat {seat + 1}"
        t = d.peer.table
        return t.terms.nicknames[t.seating[seat]]

    def _say_shuffles(self) -> None:
        d = self.driver
        if d is None:
            return
        count = shuffle_count(d.peer.table)
        last_hand, said = self._shuffles_said
        if count.hand < 0 or count.hand < last_hand:
            return
        if count.hand > last_hand:
            said = 0
        # Every shuffle verified since the last look, even if several came in one batch.
        for k in range(said + 1, count.shuffles + 1):
            text = f"shuffle {k}/{count.seats} verified ({self._nick(k - 1)})"
            self._chat.append(ChatLine(None, text))
        self._shuffles_said = (count.hand, max(said, count.shuffles))
        del self._chat[:-MAX_CHAT]

    def _on_events(self, events: list[Event]) -> None:
        d = self.driver
        n = d.peer.table.n if d is not None else 0
        self._say_shuffles()
        for ev in events:
            if isinstance(ev, HandStarted):
                self._hand_over = False
                self.line(None, f"hand {ev.hand + 1}: {n}/{n} shuffles and {n}/{n} deals "
                                "verified")  # fmt: skip
            elif isinstance(ev, HandEnded):
                self._hand_over = True
            elif isinstance(ev, Fault) and ev.error.author is not None:
                author = ev.error.author
                seat = -1
                if d is not None and d.peer.table.party_seat:
                    seat = d.peer.table.party_seat[author]
                nick = self._nick(seat) if seat >= 0 else str(author)
                self._complaints.append(Complaint(seat, nick, str(ev.error)))
            elif isinstance(ev, TimedOut):
                names = ", ".join(self._party_nick(p) for p in ev.parties)
                self.line(None, f"waiting for {names} past the table's limit")
            elif isinstance(ev, TimeUp):
                self.line(None, "the time is up (a tied lead plays on)")
            elif isinstance(ev, Voided):
                self.line(None, VOIDED.get(ev.action, f"agreed by the table: {ev.action}"))
        self._turn_since = time.monotonic()
        self._say_shuffles()
        self._publish()

    def _party_nick(self, party: int) -> str:
        d = self.driver
        return d.peer.table.terms.nicknames[party] if d is not None else str(party)

    def _link_states(self) -> tuple[tuple[bool, str], ...]:
        d = self.driver
        if d is None or not d.peer.table.seating:
            return ()
        t = d.peer.table
        out = []
        for party in t.seating:
            key = t.terms.keys[party]
            if party == d.peer.party:
                out.append((True, ""))
                continue
            out.append((d.mesh.is_up(key), d.mesh.how_linked(key) or ""))
        return tuple(out)

    def _publish(self) -> None:
        self._version += 1
        self._snapshot = self._build()
        self._changed.set()
        self._changed = trio.Event()

    def _sides(self) -> int:
        return match_sides(self.rules) if self.rules is not None else 2

    def _seats(self) -> tuple[SeatInfo, ...]:
        d = self.driver
        sides = self._sides()
        if d is None or not d.peer.table.seating:
            n = self.rules.players if self.rules is not None else 4
            return tuple(SeatInfo(s, f"seat {s + 1}", s % sides, s % sides) for s in range(n))
        t = d.peer.table
        view = t.view
        links = self._links or self._link_states()
        bots = self._bot_parties()
        out = []
        for seat, party in enumerate(t.seating):
            side = view.side_of(seat) if view is not None else seat % sides
            up, how = links[seat] if seat < len(links) else (True, "")
            out.append(SeatInfo(seat, t.terms.nicknames[party], side, seat % sides,
                                party in bots, up, t.terms.keys[party].fingerprint(),
                                how))  # fmt: skip
        return tuple(out)

    def _bot_parties(self) -> frozenset[int]:
        d = self.driver
        return bot_parties(d.peer, self.bot_keys, self.bots) if d is not None else frozenset()

    def _scores(self) -> tuple[int, ...]:
        d = self.driver
        m = d.peer.table.match if d is not None else None
        if m is None:
            return (0,) * self._sides()
        return tuple(m.scores)

    def _build(self) -> TableSnapshot:
        d = self.driver
        t = d.peer.table if d is not None else None
        m = t.match if t is not None else None
        view = t.view.copy() if t is not None and t.view is not None else None
        count = shuffle_count(t) if t is not None else None
        rules = self.rules
        if rules is None:
            from buraco_p2p.rules import get_preset

            rules = get_preset("classic")
        return TableSnapshot(
            title=self.title,
            rules=rules,
            me=self._my_seat(),
            seats=self._seats(),
            view=view,
            scores=self._scores(),
            fairness=Fairness(
                True,
                shuffles_verified=count.shuffles if count is not None else 0,
                shuffles_total=count.seats if count is not None else 0,
                complaints=tuple(self._complaints),
            ),
            version=self._version,
            history=tuple(m.results) if m is not None else (),
            hand_over=self._hand_over,
            match_over=bool(t is not None and t.closed),
            winner=m.winner if m is not None and t is not None and t.closed else None,
            progress=count.progress if count is not None else None,
            chat=tuple(self._chat),
            turn_since=self._turn_since,
            can_save_log=d is not None,
        )
