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

Every move is told in the feed (`narration.Narrator`, the words the line mode and the practice
table use too) and shown one at a time, on the screen's one clock (`told.Teller`): the moves,
the table's news (shuffles, deals, timeouts, agreements) and each hand's result are told in
the log's order, pausing `pace` seconds after each move of another seat, so that a person sees
a bot's draw, melds and discard happen; the header's scores, the history and the panel at a
hand's end follow what has been told, never the session running ahead. The pacing is on this
screen only; the session and the protocol run at their own speed (`skip` catches the screen
up at once). The end of a hand is held: the ended hand stays on screen with its summary until
`ready()`, the next deal behind it. A resumed table tells the hand in play from its deal.

A void agreement another party proposed is told from its arrival (`TableSnapshot.proposal`,
`proposals.Proposals`); a round we signed that waited twice the table's timeout says whether
we signed again naming the holders too or wait naming nobody (`VoidHeld`), in the line
client's words (`buraco_p2p.text.agreement`). Who left the table (a link down) and who is
back are told with the table's limit.

A re-join code (docs/protocol.md 2.15) is never chat: on a joiner, a `BRJ-` line said at the
table goes to the mesh's `moves.accept_code` and the feed says what it dials or why the code
is refused, as the line client does; on a host whose address changed, `host_code` puts the
code on a line of its own under what it is for.
"""

from __future__ import annotations

import time
from pathlib import Path

import trio

from buraco_p2p.engine import HandResult, HandState, IllegalMove, Move, match_sides
from buraco_p2p.net.channel.identity import PeerKey
from buraco_p2p.net.reach.rejoin import looks_like_rejoin
from buraco_p2p.play import matchlog
from buraco_p2p.play.driver import Driver, bot_parties, my_turn
from buraco_p2p.play.line import take_rejoin_code
from buraco_p2p.rules import RuleSet
from buraco_p2p.session import (
    Abandoned,
    Event,
    Fault,
    HandEnded,
    HandStarted,
    MatchEnded,
    Phase,
    Rewrite,
    Table,
    TimedOut,
    TimeUp,
    Voided,
    VoidHeld,
    VoidProposed,
)
from buraco_p2p.text.agreement import (
    held_text,
    left_text,
    rewrite_text,
)
from buraco_p2p.text.glyphs import Glyphs
from buraco_p2p.text.narration import (
    TIME_UP,
    Narrator,
    abandoned_text,
    dealt_line,
    shuffle_line,
    voided_line,
)
from buraco_p2p.text.rejoin import host_code_lines
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
from buraco_p2p.ui.proposals import Proposals
from buraco_p2p.ui.told import Beat, Standing, Teller, standing_of

__all__ = ["DriverFeed", "ShuffleCount", "shuffle_count", "verify_program"]

MAX_CHAT = 500
LINK_POLL_S = 1.0


verify_program = matchlog.program  # how to run this program's `verify` from a shell


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
        self.bot_level = ""  # the level of the bot peers this process started
        self._version = 0
        self._changed = trio.Event()
        self._chat: list[ChatLine] = []
        self._complaints: list[Complaint] = []
        self._shuffles_said = (-1, 0)  # (hand, shuffles) last said in the feed
        self._links: tuple[tuple[bool, str], ...] = ()
        self._snapshot: TableSnapshot | None = None
        self._narrator: Narrator | None = None
        self._before: Progress | None = None  # before the driver: whom the genesis waits for
        self.log_root: Path | None = None  # the data directory: a finished match's log goes there
        self.dir_options = ""  # the directory options given, for the command to come back
        self._log_saved: Path | None = None
        self._gone: set[int] = set()  # seats said to have left, not yet back
        # What the screen shows of the match follows what has been told (`told.Teller`).
        self._told = Teller(Standing((0,) * self._sides()), self._tell_lines, self._publish,
                            self._my_seat)  # fmt: skip
        self._waiting: tuple[int, ...] = ()  # parties the table waits for (not us)
        self._waiting_since = time.monotonic()
        self._timed_out_at = -1  # the log length at the last timeout
        self._proposals = Proposals(self._party_nick)  # another party's, to agree to

    @property
    def pace(self) -> float:
        """Seconds the screen pauses after another seat's move (on this screen only)."""
        return self._told.pace

    @pace.setter
    def pace(self, seconds: float) -> None:
        self._told.pace = seconds

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
        if d is None:
            raise MoveRefused("the table is not set up yet", "wrong_phase")
        if not my_turn(d.peer):
            raise MoveRefused(self.why_not_now(), "wrong_player")
        try:
            d.play(move)
        except IllegalMove as e:
            raise MoveRefused(e.message, e.code.value) from None
        self._publish()
        await trio.lowlevel.checkpoint()

    async def say(self, text: str) -> None:
        """A chat line to the table; a re-join code (`BRJ-...`, typed or pasted) is never
        chat: its addresses are dialed, and the feed says so or why it is refused."""
        if self.driver is not None and looks_like_rejoin(text):
            self.line(None, take_rejoin_code(self.driver.mesh.moves, text).removeprefix("* "))
        elif self.driver is not None and text.strip():
            self.driver.chat(text.strip())
            self.line(self._my_seat(), text.strip())
        await trio.lowlevel.checkpoint()

    def waiting_for(self, names: tuple[str, ...]) -> None:
        """Before the match: the host's genesis waits for these players' signatures on the
        table's terms (none: it does not wait). Shown, and said in the feed once each."""
        if not names:
            self._before = None
        else:
            who = ", ".join(names)
            self._before = Progress(f"the table's terms: waiting for {who} to sign", None, 0, 0)
            self.line(None, f"waiting for {who} to sign the table's terms (q leaves)")
        self._publish()

    def host_code(self, code: str) -> None:
        """Host: our public address changed and some players may not find the table again:
        the re-join code for them, on a line of its own under what it is for."""
        for text in host_code_lines(code):
            self.line(None, text)

    async def ready(self) -> None:
        self._told.ready()
        self._publish()
        await trio.lowlevel.checkpoint()

    async def agree(self, action: str) -> str:
        """End, void or replace after a timeout, through the driver; said in the feed too."""
        await trio.lowlevel.checkpoint()
        if self.driver is None:
            return "the table is not set up yet"
        said = self.driver.agree(action)
        self.line(None, f"you: {said}")
        return said

    async def skip(self) -> None:
        """Show the table as it is now: the moves waiting on screen are shown at once."""
        self._told.skip()
        await trio.lowlevel.checkpoint()

    async def save_log(self, path: Path) -> str:
        d = self.driver
        if d is None:
            raise SaveUnavailable("no match yet")
        closed = d.peer.table.closed
        matchlog.save_log(path, [e.wire for e in d.peer.log])
        return matchlog.audit_command(path, finished=closed)

    def _keep_log(self) -> None:
        """At the match's end, the log into the data directory's `logs/` (once), for its
        audit and replay commands (`play.matchlog`)."""
        d = self.driver
        if d is None or self.log_root is None or self._log_saved is not None:
            return
        t = d.peer.table
        if not t.closed:
            return
        path = matchlog.log_path(self.log_root, t.terms.table_id)
        try:
            self._log_saved = matchlog.save_log(path, [e.wire for e in d.peer.log],
                                                t.terms.table_id)
        except OSError as exc:
            self._log_saved = Path()
            self.line(None, f"the log could not be kept in {path}: {exc.strerror or exc}")

    def farewell(self) -> list[str]:
        """What to print on the terminal once the screen is gone: the finished match's log
        with the commands that audit and replay it, or how to come back to the table."""
        d = self.driver
        if d is None:
            return []
        t = d.peer.table
        tid = t.terms.table_id.hex()
        if t.closed:
            self._keep_log()
            path = self._log_saved
            if path is None or path == Path():
                return [f"the match at table {tid} is over"]
            return [f"the match at table {tid} is over", *matchlog.told(path)]
        opts = f" {self.dir_options}" if self.dir_options else ""
        others = ("its bots stop with you and come back with it" if self.bots else
                  "the others wait for you (past the table's limit they may end or void the "
                  "hand, or seat a bot)")  # fmt: skip
        return [f"left table {tid}; {others}; come back with:",
                f"{matchlog.program()} resume {tid}{opts}"]

    def why_not_now(self) -> str:
        """Why the table takes no move of ours now, in words: the real reason, read from the
        session (a fault, an agreement being signed, the hand over, another's turn, or the
        peers whose entries the table still waits for)."""
        d = self.driver
        if d is None:
            return "the table is not set up yet"
        t = d.peer.table
        view = t.view
        if t.fault is not None:
            return "the table has stopped on a fault (the complaint says whose)"
        if t.voiding is not None or d.peer.agreement is not None:
            return "an agreement is being signed: moves wait until it is settled"
        if d.peer.disputing:
            return ("a player signed two different entries for one place in the log: moves "
                    "wait until the table agrees to void that hand")  # fmt: skip
        if view is None or view.ended:
            return "the hand is over: the next one is being dealt"
        if view.turn != self._my_seat():
            return f"it is {self._nick(view.turn)}'s turn"
        waiting = [p for p in t.waiting_for if p != d.peer.party]
        if waiting:
            names = ", ".join(self._party_nick(p) for p in waiting)
            return f"the table is waiting for {names} (their share of the cards just shown)"
        return "the table is still taking the last move in: try again in a moment"

    # -- the driver -----------------------------------------------------------------------

    def attach(self, driver: Driver) -> None:
        """Show `driver`'s table from now on (its events and chat come here). A table that
        is already under way (resumed) is told from the deal of the hand in play, at once."""
        self.driver = driver
        self._proposals.driver = driver
        t = driver.peer.table
        self.rules = t.rules
        driver.on_events = self._on_events
        driver.on_chat = self._on_chat
        view = t.view
        self._narrator = Narrator(self._name, Glyphs(deck_size=self.rules.deck_size))
        if view is None or view.ended:
            self._narrator.follow(view)  # an ended hand is not told again: its result is
            self._told.start(view, self._standing())
        else:
            # A hand in play (a resumed table), from its deal: what was played before we
            # left is told again, at once.
            self._told.start(None, self._standing())
            self._told.add(self._dealt_beat(view, None))
            self._tell_moves()
            self._told.skip()
            count = shuffle_count(t)  # its shuffles were before the deal: not told after it
            self._shuffles_said = (count.hand, count.shuffles)
        self._say_shuffles()
        self._publish()

    async def follow(self) -> None:
        """Publish a snapshot whenever the log grows or a link changes, until cancelled."""
        d = self.driver
        assert d is not None
        seen = [-1]
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._told.run)
            await self._watch(d, seen)

    async def _watch(self, d: Driver, seen: list[int]) -> None:
        while True:
            with trio.move_on_after(LINK_POLL_S):
                await d.wait_until(lambda p: len(p.log) != seen[0])
            grown = len(d.peer.log) != seen[0]
            seen[0] = len(d.peer.log)
            links = self._link_states()
            if grown or links != self._links:
                self._tell_links(self._links, links)
                self._links = links
                self._say_shuffles()
                self._tell_moves()
                self._publish()

    def _tell_links(self, old: tuple[tuple[bool, str], ...],
                    new: tuple[tuple[bool, str], ...]) -> None:  # fmt: skip
        """Who left the table (a link that was up went down) and who is back, in the feed,
        with the table's limit: past it without them, the others may end the match, void the
        hand or seat a bot for them."""
        if len(old) != len(new):
            return
        limit = left_text(self._limit())
        for seat, ((was, _), (now, _)) in enumerate(zip(old, new, strict=True)):
            if was and not now:
                self._gone.add(seat)
                self._tell(f"{self._nick(seat)} left the table (their link is down): the table "
                           f"waits for them up to {limit}, then you may end the match, void the "
                           "hand or seat a bot for them")  # fmt: skip
            elif now and not was and seat in self._gone:
                self._gone.discard(seat)
                self._tell(f"{self._nick(seat)} is back at the table")

    def _limit(self) -> float:
        """The table's limit on a wait, in seconds (its timeout)."""
        d = self.driver
        return d.peer.table.terms.timeout_ms / 1000 if d is not None else 0.0

    def _tell_moves(self) -> None:
        """Queue the moves applied since the last look, to be told in turn."""
        d, narrator = self.driver, self._narrator
        if d is None or narrator is None:
            return
        for step in narrator.follow(d.peer.table.view):
            self._told.add(Beat(step.lines, step.seat, step.state))

    def _tell(self, text: str) -> None:
        """A line of the table's own news, told in its place among the moves."""
        self._told.add(Beat((text[:200],)))

    def _tell_lines(self, lines: tuple[str, ...]) -> None:
        self._chat.extend(ChatLine(None, text) for text in lines)
        del self._chat[:-MAX_CHAT]

    def _standing(self, result: HandResult | None = None) -> Standing:
        d = self.driver
        match = d.peer.table.match if d is not None else None
        return standing_of(match, self._sides(), result)

    def _dealt_beat(self, view: HandState, n: int | None) -> Beat:
        """The deal of `view`'s hand, told: its line, and the hand as dealt (`n`: the seats
        whose shuffles and deal shares were verified, None where they were not watched)."""
        dealt = HandState(view.setup, view.viewer, None)
        dealt.known = list(view.known)
        dealt.slot_of = dict(view.slot_of)
        dealer = self._name(view.setup.dealer)
        hand = view.setup.hand_number
        said = f"hand {hand + 1} dealt by {dealer}" if n is None else dealt_line(hand, dealer, n)
        return Beat((said,), None, dealt)

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
            self._tell(shuffle_line(k, count.seats, self._nick(k - 1)))
        self._shuffles_said = (count.hand, max(said, count.shuffles))

    def _on_events(self, events: list[Event]) -> None:
        """The session's events, told in the log's order among the moves: each line and
        each result waits for the moves before it."""
        d = self.driver
        n = d.peer.table.n if d is not None else 0
        for ev in events:
            if isinstance(ev, HandStarted):
                self._say_shuffles()
                view = d.peer.table.view if d is not None else None
                if view is not None and view.setup.hand_number == ev.hand:
                    self._narrator_starts(view)
                    self._told.add(self._dealt_beat(view, n))
                else:
                    self._tell(dealt_line(ev.hand, self._name(ev.dealer), n))
                continue
            self._tell_moves()
            if isinstance(ev, MatchEnded):
                self._keep_log()
            if isinstance(ev, HandEnded | MatchEnded):
                self._told.add(Beat((), None, None, self._standing(
                    ev.result if isinstance(ev, HandEnded) else None)))
            elif isinstance(ev, Fault) and ev.error.author is not None:
                author = ev.error.author
                seat = -1
                if d is not None and d.peer.table.party_seat:
                    seat = d.peer.table.party_seat[author]
                nick = self._nick(seat) if seat >= 0 else str(author)
                self._complaints.append(Complaint(seat, nick, str(ev.error)))
                self._tell(f"CHEATING COMPLAINT against {nick}: {ev.error}")
            elif isinstance(ev, Rewrite):
                self._tell(rewrite_text(ev, self._party_nick))
            elif isinstance(ev, TimedOut):
                self._timed_out_at = len(d.peer.log) if d is not None else -1
                self._proposals.track()
                self._tell(self._proposals.timed_out_line(ev))
            elif isinstance(ev, Abandoned):
                self._told.add(Beat((abandoned_text(ev, self._party_nick),), None, None,
                                    self._standing()))  # fmt: skip
            elif isinstance(ev, VoidProposed):
                self._proposals.track()
                self._tell(self._proposals.line(ev))
            elif isinstance(ev, VoidHeld):
                said = held_text(ev, self._party_nick)
                if said is not None:
                    self._tell(said)
            elif isinstance(ev, TimeUp):
                self._tell(TIME_UP)
            elif isinstance(ev, Voided):
                self._tell(voided_line(ev.action, [self._party_nick(p) for p in ev.silent]))
        self._say_shuffles()
        self._tell_moves()
        self._publish()

    def _narrator_starts(self, view: HandState) -> None:
        """The narrator follows `view`'s hand from its deal (its moves are told after the
        deal's line)."""
        if self._narrator is not None:
            self._narrator.shadow = HandState(view.setup, view.viewer, None)

    def _name(self, seat: int) -> str:
        return "you" if seat == self._my_seat() else self._nick(seat)

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

    def _track_wait(self) -> None:
        d = self.driver
        if d is None:
            return
        waiting = tuple(p for p in d.peer.table.waiting_for if p != d.peer.party)
        if waiting != self._waiting:
            self._waiting = waiting
            self._waiting_since = time.monotonic()

    def _publish(self) -> None:
        self._track_wait()
        self._proposals.track()
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
            ours = self.bots or t.terms.keys[party].raw in self.bot_keys
            out.append(SeatInfo(seat, t.terms.nicknames[party], side, seat % sides,
                                party in bots, up, t.terms.keys[party].fingerprint(),
                                how, self.bot_level if party in bots and ours else ""))  # fmt: skip
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

    def _view_shown(self) -> HandState | None:
        """The hand as told, with what we have learnt of its cards since (a card drawn, the
        cards shown at the count): cards are not moves, they show as soon as we hold them."""
        d = self.driver
        real = d.peer.table.view if d is not None else None
        told = self._told.view
        if told is None:
            return None
        if real is not None and real.setup == told.setup and len(real.moves) == len(told.moves):
            return real.copy()  # caught up: the table's own view, reveals awaited and all
        view = told.copy()
        if real is not None and real.setup == told.setup:
            view.known = list(real.known)
            view.slot_of = dict(real.slot_of)
            view.public = set(real.public)
        return view

    def _build(self) -> TableSnapshot:
        d = self.driver
        t = d.peer.table if d is not None else None
        told = self._told
        view = self._view_shown()
        st = told.standing
        # Shuffles and the deal are the present only while no hand is on screen.
        count = shuffle_count(t) if t is not None and view is None else None
        n = t.n if t is not None else 0
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
            scores=st.scores,
            fairness=Fairness(
                True,
                shuffles_verified=count.shuffles if count is not None else n,
                shuffles_total=count.seats if count is not None else n,
                complaints=tuple(self._complaints),
            ),
            version=self._version,
            history=st.history,
            hand_over=told.hand_over,
            match_over=st.over,
            winner=st.winner,
            progress=(count.progress if count is not None and not told.hand_over
                      else None) if d is not None else self._before,
            chat=tuple(self._chat),
            turn_since=told.turn_since,
            can_save_log=d is not None,
            next_dealer=st.next_dealer,
            waiting=tuple(self._party_nick(p) for p in self._waiting),
            waiting_since=self._waiting_since,
            wait_limit=self._limit(),
            timed_out=d is not None and (
                d.peer.proposal is not None  # another party proposed: ours to join
                or (self._timed_out_at == len(d.peer.log) and bool(self._waiting))
            ),
            proposal=self._proposals.current(),
            rules_known=self.rules is not None,
            log_saved=str(self._log_saved) if self._log_saved and st.over else "",
            signed=t is not None and t.closed,
        )
