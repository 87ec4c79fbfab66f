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
table use too) and shown one at a time: the screen's view steps through the table's moves,
pausing `pace` seconds after each move of another seat, so that a person sees
a bot's draw, melds and discard happen. The pacing is on this screen only; the session and the
protocol run at their own speed (`skip` catches the screen up at once). The end of a hand is
held: the ended hand stays on screen with its summary until `ready()`, the next deal behind it.

A void agreement another party proposed is told from its arrival (`TableSnapshot.proposal`):
what it is, the key that joins it, or why our driver will not (the parties it names are not
late at our clock), and the time left, twice the table's timeout from when we saw it, before
the others may name us too if we neither agree nor play on (docs/protocol.md 4.5, "Retries");
a round we signed that waited that long says whether we signed again naming the holders too or
wait naming nobody (`VoidHeld`), in the line client's words (`buraco_p2p.text.agreement`).

A re-join code (docs/protocol.md 2.15) is never chat: on a joiner, a `BRJ-` line said at the
table goes to the mesh's `moves.accept_code` and the feed says what it dials or why the code
is refused, as the line client does; on a host whose address changed, `host_code` puts the
code on a line of its own under what it is for.
"""

from __future__ import annotations

import shlex
import shutil
import sys
import time
from collections import deque
from pathlib import Path

import trio

from buraco_p2p.engine import HandState, IllegalMove, Move, match_sides
from buraco_p2p.logfile import encode_log
from buraco_p2p.net.channel.identity import PeerKey
from buraco_p2p.net.reach.rejoin import looks_like_rejoin
from buraco_p2p.play.driver import Driver, bot_parties, my_turn
from buraco_p2p.play.line import take_rejoin_code
from buraco_p2p.rules import RuleSet
from buraco_p2p.session import (
    Abandoned,
    Event,
    Fault,
    HandStarted,
    Phase,
    Table,
    TimedOut,
    TimeUp,
    Voided,
    VoidHeld,
    VoidProposed,
)
from buraco_p2p.session.peer import RETRY_TIMEOUTS
from buraco_p2p.text.agreement import held_text, not_late_text, proposal_text, warning_text
from buraco_p2p.text.glyphs import Glyphs
from buraco_p2p.text.narration import (
    TIME_UP,
    Narrator,
    Step,
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
    Proposal,
    SaveUnavailable,
    SeatInfo,
    TableSnapshot,
)

__all__ = ["DriverFeed", "ShuffleCount", "shuffle_count", "verify_program"]

MAX_CHAT = 500
LINK_POLL_S = 1.0
PACE_S = 0.6  # on screen, between another seat's moves while more are waiting


def verify_program() -> str:
    """How to run this program's `verify` from a shell: `buraco-p2p` where that name is on
    the PATH and is this installation, else this interpreter with `-m buraco_p2p` (someone who
    started it through bootstrap.py has no `buraco-p2p` on the PATH)."""
    found = shutil.which("buraco-p2p")
    here = Path(sys.executable).parent / "buraco-p2p"
    if found is not None and Path(found).resolve() == here.resolve():
        return "buraco-p2p"
    return f"{shlex.quote(sys.executable)} -m buraco_p2p"


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
        self._hand_over = False
        self._turn_since = time.monotonic()
        self._shuffles_said = (-1, 0)  # (hand, shuffles) last said in the feed
        self._links: tuple[tuple[bool, str], ...] = ()
        self._snapshot: TableSnapshot | None = None
        self.pace = PACE_S
        self._narrator: Narrator | None = None
        self._steps: deque[Step] = deque()
        self._shown: HandState | None = None  # the hand as the screen shows it (paced)
        self._step_added = trio.Event()
        self._skip = trio.Event()
        self._readied = trio.Event()
        self._waiting: tuple[int, ...] = ()  # parties the table waits for (not us)
        self._waiting_since = time.monotonic()
        self._timed_out_at = -1  # the log length at the last timeout
        # The proposal shown (author, action, silent) and when we first saw it: the others may
        # name us too twice the table's timeout after that, unless we agree or play on.
        self._proposal_key: tuple[int, str, tuple[int, ...]] | None = None
        self._proposal_seen = time.monotonic()

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

    def host_code(self, code: str) -> None:
        """Host: our public address changed and some players may not find the table again:
        the re-join code for them, on a line of its own under what it is for."""
        for text in host_code_lines(code):
            self.line(None, text)

    async def ready(self) -> None:
        self._hand_over = False
        self._readied.set()
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
        self._skip.set()
        await trio.lowlevel.checkpoint()

    async def save_log(self, path: Path) -> str:
        if self.driver is None:
            raise SaveUnavailable("no match yet")
        path.write_bytes(encode_log(e.wire for e in self.driver.peer.log))
        return f"{verify_program()} verify --partial {shlex.quote(str(path))}"

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
        """Show `driver`'s table from now on (its events and chat come here)."""
        self.driver = driver
        self.rules = driver.peer.table.rules
        driver.on_events = self._on_events
        driver.on_chat = self._on_chat
        view = driver.peer.table.view
        self._hand_over = view is not None and view.ended
        self._narrator = Narrator(self._name, Glyphs(deck_size=self.rules.deck_size))
        # A resumed table is not told again from its first move: the screen starts from now.
        self._narrator.follow(view)
        self._shown = None if view is None else view.copy()
        self._publish()

    async def follow(self) -> None:
        """Publish a snapshot whenever the log grows or a link changes, until cancelled."""
        d = self.driver
        assert d is not None
        seen = [-1]
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._pacer)
            await self._watch(d, seen)

    async def _watch(self, d: Driver, seen: list[int]) -> None:
        while True:
            with trio.move_on_after(LINK_POLL_S):
                await d.wait_until(lambda p: len(p.log) != seen[0])
            grown = len(d.peer.log) != seen[0]
            seen[0] = len(d.peer.log)
            links = self._link_states()
            if grown or links != self._links:
                self._links = links
                self._say_shuffles()
                self._tell_moves()
                self._publish()

    def _tell_moves(self) -> None:
        """Queue the moves applied since the last look, for the pacer to show."""
        d, narrator = self.driver, self._narrator
        if d is None or narrator is None:
            return
        steps = narrator.follow(d.peer.table.view)
        if steps:
            self._steps.extend(steps)
            self._step_added.set()

    async def _pacer(self) -> None:
        """Show the queued moves one at a time; hold the end of a hand until `ready()`."""
        me = self._my_seat()
        while True:
            if not self._steps:
                self._step_added = trio.Event()
                if not self._hand_over:
                    self._shown = None
                    self._publish()
                await self._step_added.wait()
                continue
            step = self._steps.popleft()
            if self._shown is not None and self._shown.setup != step.state.setup:
                await self._hold_hand_end()
            self._shown = step.state
            for text in step.lines:
                self._chat.append(ChatLine(None, text))
            del self._chat[:-MAX_CHAT]
            if step.state.ended:
                self._hand_over = True
                self._readied = trio.Event()
            self._publish()
            if step.state.ended:
                await self._hold_hand_end()
            elif step.seat != me and not self._skip.is_set():
                # A pause after each move of another seat, so the next one (usually already
                # on its way) does not replace it on screen at once.
                with trio.move_on_after(self.pace):
                    await self._skip.wait()
            if not self._steps:
                self._skip = trio.Event()

    async def _hold_hand_end(self) -> None:
        """Keep an ended hand on screen until the player has seen it (`ready()`)."""
        if self._hand_over:
            await self._readied.wait()

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
            self._chat.append(ChatLine(None, shuffle_line(k, count.seats, self._nick(k - 1))))
        self._shuffles_said = (count.hand, max(said, count.shuffles))
        del self._chat[:-MAX_CHAT]

    def _on_events(self, events: list[Event]) -> None:
        d = self.driver
        n = d.peer.table.n if d is not None else 0
        self._say_shuffles()
        for ev in events:
            if isinstance(ev, HandStarted):
                self.line(None, dealt_line(ev.hand, self._name(ev.dealer), n))
            elif isinstance(ev, Fault) and ev.error.author is not None:
                author = ev.error.author
                seat = -1
                if d is not None and d.peer.table.party_seat:
                    seat = d.peer.table.party_seat[author]
                nick = self._nick(seat) if seat >= 0 else str(author)
                self._complaints.append(Complaint(seat, nick, str(ev.error)))
                self.line(None, f"CHEATING COMPLAINT against {nick}: {ev.error}")
            elif isinstance(ev, TimedOut):
                names = ", ".join(self._party_nick(p) for p in ev.parties)
                self._timed_out_at = len(d.peer.log) if d is not None else -1
                self._track_proposal()
                prop = self._proposal()
                if prop is not None and not prop.named_me and not prop.blocked:
                    # Any key joins the proposal as it stands: say that, not what each key
                    # would propose.
                    what = proposal_text(prop.by, prop.action, prop.silent)
                    self.line(None, f"waiting for {names} past the table's limit "
                                    f"({ev.waited:.0f} s): you can agree now ({what}): "
                                    f"{prop.action[0].upper()} agrees")  # fmt: skip
                else:
                    self.line(None, f"waiting for {names} past the table's limit "
                                    f"({ev.waited:.0f} s): E ends the match, V voids the hand, "
                                    "R seats bots")  # fmt: skip
            elif isinstance(ev, Abandoned):
                self.line(None, abandoned_text(ev, self._party_nick))
            elif isinstance(ev, VoidProposed):
                self._track_proposal()
                self.line(None, self._proposal_line(ev))
            elif isinstance(ev, VoidHeld):
                said = held_text(ev, self._party_nick)
                if said is not None:
                    self.line(None, said)
            elif isinstance(ev, TimeUp):
                self.line(None, TIME_UP)
            elif isinstance(ev, Voided):
                self.line(None, voided_line(ev.action, [self._party_nick(p) for p in ev.silent]))
        self._turn_since = time.monotonic()
        self._say_shuffles()
        self._tell_moves()
        self._publish()

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

    def _proposal_line(self, ev: VoidProposed) -> str:
        """The feed's line for another party's proposal: what it is, what our keys do about
        it (or why we cannot agree), and when the others may name us too."""
        by = self._party_nick(ev.party)
        d = self.driver
        if d is not None and d.peer.party in ev.silent:
            return (f"{by} proposes to {ev.action} naming you as gone: it needs the others, "
                    "who join only if your moves stop reaching them")  # fmt: skip
        text = proposal_text(by, ev.action, [self._party_nick(p) for p in ev.silent])
        blocked = self._blocked(ev.silent)
        warn = warning_text(self._retry_after())
        if blocked:
            return f"{text}; you cannot agree: {blocked}; {warn}"
        return f"{text}: {ev.action[0].upper()} agrees; {warn}"

    def _retry_after(self) -> float:
        """Twice the table's timeout, in seconds: how long a signer of a void waits for the
        others' signatures before it names the parties that did not sign (4.5, R2)."""
        d = self.driver
        return RETRY_TIMEOUTS * d.peer.table.terms.timeout_ms / 1000 if d is not None else 0.0

    def _blocked(self, silent: tuple[int, ...]) -> str:
        """Why our driver will not join a proposal naming `silent` ("" if it would): it signs
        only for parties our own clock has seen keep the step waiting past the timeout (the
        author of a fault aside), the rule `Driver.agree` and the session apply."""
        d = self.driver
        if d is None:
            return "the table is not set up yet"
        t = d.peer.table
        if not t.can_void(silent):
            return ""
        nameable = set(d.overdue)
        if t.fault is not None and t.fault.author is not None:
            nameable.add(t.fault.author)
        waited = set(t.waiting_for)
        return "; ".join(not_late_text(self._party_nick(p), p in waited,
                                       d.mesh.is_up(t.terms.keys[p]))
                         for p in silent if p not in nameable)  # fmt: skip

    def _track_proposal(self) -> None:
        """Note when we first saw the proposal we hold and have not signed."""
        d = self.driver
        prop = d.peer.proposal if d is not None else None
        if d is None or prop is None or d.peer.agreement is not None:
            self._proposal_key = None
            return
        motion, author = prop
        key = (author, motion.action, motion.silent)
        if key != self._proposal_key:
            self._proposal_key = key
            self._proposal_seen = time.monotonic()

    def _proposal(self) -> Proposal | None:
        """The proposal for the screen, while we hold one we have not signed."""
        d = self.driver
        key = self._proposal_key
        if d is None or key is None:
            return None
        author, action, silent = key
        named_me = d.peer.party in silent
        return Proposal(
            by=self._party_nick(author),
            action=action,
            silent=tuple(self._party_nick(p) for p in silent),
            deadline=self._proposal_seen + self._retry_after(),
            blocked="" if named_me else self._blocked(silent),
            named_me=named_me,
        )

    def _publish(self) -> None:
        self._track_wait()
        self._track_proposal()
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
        """The hand as the screen shows it: the paced or held one, else the table's own. A
        paced view of the hand in play learns our own cards as soon as the table has them."""
        d = self.driver
        real = d.peer.table.view if d is not None else None
        shown = self._shown
        if shown is None or not (self._steps or self._hand_over):
            return None if real is None else real.copy()
        view = shown.copy()
        if real is not None and real.setup == shown.setup:
            view.known = list(real.known)
            view.slot_of = dict(real.slot_of)
        return view

    def _build(self) -> TableSnapshot:
        d = self.driver
        t = d.peer.table if d is not None else None
        m = t.match if t is not None else None
        view = self._view_shown()
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
            next_dealer=m.dealer if m is not None else -1,
            waiting=tuple(self._party_nick(p) for p in self._waiting),
            waiting_since=self._waiting_since,
            timed_out=d is not None and (
                d.peer.proposal is not None  # another party proposed: ours to join
                or (self._timed_out_at == len(d.peer.log) and bool(self._waiting))
            ),
            proposal=self._proposal(),
        )
