"""The lobby: `buraco-p2p host` / `buraco-p2p join`, a plain line interface while seats fill.

Everyone sees who is seated (and who is connected) and can chat; the host answers each
join request with y/n (or passes `--auto-approve`). Lines starting with `/` are commands:
`/who` lists the seats, `/quit` leaves. The lobby logic (`Lobby`) takes its input lines
and output function from the caller, so it runs the same in a terminal and in tests.

A join prompt is answered only by a line that is exactly `y` or `n`, typed while that very
prompt is on screen and after it has been there for `answer_delay` seconds: a request that is
withdrawn and comes back is a new prompt with a new number, and a `y` typed for the old one
cannot seat it. Any other line is chat as usual; a `y` or `n` with no prompt on screen is
answered with a notice and sent nowhere (it is not chat: it was meant as an answer).

Hand-off to the match: when every seat is taken, each player types `/ready` (a `["ready"]`
message to the table); once every seated player is ready, the lobby stops and, if a match
runner has been installed (`set_match_runner`, done by the network-play layer above this
one), hands it the mesh, the input lines and the messages the lobby received that were not
chat (the first messages of the match). Without a runner the lobby stays a lobby.

A full-screen front end drives the same `Lobby` without its line loop: `until_ready()` shows
the table's messages and events until every seat is ready, `handle_line` takes what the
player typed, `request` is the join prompt on screen (with `answerable_at`, when a y/n may
answer it), and `on_message` sees the table messages that are neither chat nor ready first.

Which seats are bots: a host that started bot peers (`bots`) tells the table with
`["bots", [key, ...]]` whenever a seat is taken or a peer comes back without its state, and a
joiner marks exactly the seats the host's last well-formed one names ("[bot]"). The marks go
to the match runner with the mesh, so the table shows them too.

What the lobby's messages look like on the wire and when one is well-formed is
`net.appmessages`; this module is what the lobby does with them. Everything shown on screen
that came from the network (nicknames, chat text) is stripped of control characters first
(`appmessages.printable`): a peer must not be able to rewrite another player's terminal.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from typing import Any

import trio

from buraco_p2p.net.channel.errors import NetError
from buraco_p2p.net.channel.identity import PeerKey, confusable_nicknames
from buraco_p2p.net.mesh.mesh import (
    JoinRequest,
    Mesh,
    NicknameChanged,
    PeerDown,
    PeerUp,
    RosterChanged,
    SeatFreed,
    StreamReset,
)
from buraco_p2p.net.table.appmessages import (
    bots_claimed,
    bots_message,
    chat_message,
    chat_said,
    is_ready,
    printable,
    rules_announced,
    tag_of,
    tagged,
)

# How long a join prompt is on screen before a y/n can answer it: time to read it, so an
# answer typed for the prompt it replaced is not taken for this one.
ANSWER_DELAY = 1.0
ANSWERS = {"y": True, "n": False}
Output = Callable[[str], None]
# What a lobby keeps for the match (docs/protocol.md 2.10): the agreement's and the log's
# messages, which a peer whose lobby ended first may already send; at most MAX_BACKLOG from
# each sender, so a flooding peer fills only its own share. Anything else is dropped.
MAX_BACKLOG = 64
MATCH_TAGS = frozenset({"terms", "gsig", "e", "sync", "at"})

# The match runner: (mesh, input lines, messages held back, output, the seats marked as
# bots: their identity keys) -> exit code.
MatchRunner = Callable[
    [Mesh, "trio.MemoryReceiveChannel[str]", list[tuple[PeerKey, Any]], Output, frozenset[bytes]],
    Awaitable[int],
]
_match_runner: MatchRunner | None = None


def set_match_runner(runner: MatchRunner | None) -> None:
    """Install what runs the match once every seated player is ready."""
    global _match_runner
    _match_runner = runner


class _Prompt:
    """A join request on the host's screen, and where its answer goes."""

    def __init__(self, request: JoinRequest, shown_at: float) -> None:
        self.request = request
        self.shown_at = shown_at
        self.answer: trio.MemorySendChannel[bool]
        self.answer, self.result = trio.open_memory_channel[bool](1)


class Lobby:
    """One terminal's lobby over a running mesh."""

    def __init__(self, mesh: Mesh, out: Output) -> None:
        self.mesh = mesh
        self.out = out
        self.answer_delay = ANSWER_DELAY
        self._prompt: _Prompt | None = None
        self._input_closed = False  # nobody can answer a prompt any more
        self._announced_full = False
        # Called with the number of seated players when it changes (the LAN announcement).
        self.on_seats: Callable[[int], Awaitable[None]] | None = None
        self._seats_shown = 0
        self.ready: set[bytes] = set()
        self.backlog: list[tuple[PeerKey, Any]] = []
        self._all_ready = trio.Event()
        # Sees every message that is neither chat nor ready; True keeps it from the backlog.
        self.on_message: Callable[[PeerKey, Any], bool] | None = None
        # Identity keys of the seats played by bots, marked "[bot]": on the host, the bot
        # peers it started (it made their identities); on a joiner, what the host's last
        # well-formed `bots` message said. Never a nickname: anyone can call themselves a bot.
        self.bots: frozenset[bytes] = frozenset()
        self._bots_waiting: frozenset[bytes] | None = None  # the host's, for a newer roster
        self._seating_shown: tuple[object, ...] | None = None

    @property
    def request(self) -> JoinRequest | None:
        """The join request on the host's screen, waiting for y or n."""
        return self._prompt.request if self._prompt is not None else None

    @property
    def answerable_at(self) -> float:
        """When (trio's clock) a y or n may answer the request on screen."""
        return self._prompt.shown_at + self.answer_delay if self._prompt is not None else 0.0

    async def until_ready(self) -> None:
        """Show the table's messages and events until every seat is taken and ready."""
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._pump_messages)
            nursery.start_soon(self._pump_events)
            await self._all_ready.wait()
            nursery.cancel_scope.cancel()

    def name(self, key: PeerKey) -> str:
        """A seated peer's nickname, with its short fingerprint if another seated nickname
        (ours included) could be taken for it."""
        roster = self.mesh.roster
        member = roster.member(key) if roster else None
        if member is None:
            return key.short()
        text = printable(member.nickname, 40)
        assert roster is not None
        if any(
            other.key != key and confusable_nicknames(other.nickname, member.nickname)
            for other in roster.members
        ):
            text += f" ({key.short()})"
        return text

    def seats_text(self) -> str:
        roster = self.mesh.roster
        if roster is None:
            return "no table"
        lines = []
        by_seat = {m.seat: m for m in roster.members}
        for seat in range(roster.seats):
            m = by_seat.get(seat)
            if m is not None:
                you = " (you)" if m.key == self.mesh.me else ""
                state = "" if you or self.mesh.is_up(m.key) else " [offline]"
                how = None if you else self.mesh.how_linked(m.key)
                relay = f" [{how}]" if how else ""
                bot = " [bot]" if m.key.raw in self.bots else ""
                lines.append(
                    f"  seat {seat + 1}: {printable(m.nickname, 40)}{you}{bot}  "
                    f"{m.key.fingerprint()}{state}{relay}"
                )
            else:
                lines.append(f"  seat {seat + 1}: (empty)")
        return "\n".join(lines)

    async def approve(self, request: JoinRequest) -> bool:
        """Ask the person at the host's terminal; a `y` or `n` line answers this prompt."""
        who = f"{printable(request.nickname, 40)} ({request.key.fingerprint()})"
        if self._input_closed:
            self.out(f"* join request #{request.number}: {who} declined (no input to ask)")
            await trio.lowlevel.checkpoint()
            return False
        prompt = _Prompt(request, trio.current_time())
        self._prompt = prompt
        self.out(f"* join request #{request.number}: {who} asks to join. Seat them? [y/n]")
        try:
            return await prompt.result.receive()
        except trio.Cancelled:
            # The joiner hung up, the request expired, or we are leaving: the question is over.
            self.out(
                f"* join request #{request.number} from {who} is withdrawn; no answer is needed"
            )
            raise
        finally:
            if self._prompt is prompt:
                self._prompt = None

    def _answer(self, yes: bool) -> None:
        prompt = self._prompt
        if prompt is None:
            self.out("* no join request is waiting for an answer (nothing was sent)")
            return
        if trio.current_time() - prompt.shown_at < self.answer_delay:
            self.out(
                f"* join request #{prompt.request.number} has only just been shown: "
                "read it, then answer y or n"
            )
            return
        self._prompt = None
        prompt.answer.send_nowait(yes)

    async def handle_line(self, line: str) -> bool:
        """One line typed by the user; False when they want to leave."""
        text = line.strip()
        if text.lower() in ANSWERS:
            self._answer(ANSWERS[text.lower()])
            return True
        if not text:
            return True
        if text == "/quit":
            return False
        if text == "/ready":
            await self.mesh.broadcast(["ready"])
            self._mark_ready(self.mesh.me)
            return True
        if text == "/who":
            self.out(self.seats_text())
            return True
        if text.startswith("/kick"):
            await self._kick(text[len("/kick") :].strip())
            return True
        if text.startswith("/"):
            kick = ", /kick SEAT" if self.mesh.is_host else ""
            self.out(f"* commands: /who, /ready{kick}, /quit; anything else is chat")
            return True
        await self.chat(text)
        return True

    async def chat(self, text: str) -> None:
        """Say `text` to the table as chat, whatever it looks like (never an answer)."""
        await self.mesh.broadcast(chat_message(text))
        self.out(f"<{printable(self.mesh.identity.nickname, 40)}> {printable(text)}")

    async def _kick(self, arg: str) -> None:
        """Host: free a seat by its number as `/who` shows it; every seat sees it go."""
        roster = self.mesh.roster
        if not self.mesh.is_host or roster is None:
            self.out("* only the host can free a seat")
            return
        member = next((m for m in roster.members if arg == str(m.seat + 1)), None)
        if member is None or member.key == self.mesh.me:
            self.out(f"* /kick takes the number of another player's seat (2..{roster.seats})")
            return
        try:
            await self.mesh.kick(member.key)
        except NetError as exc:
            self.out(f"* cannot free seat {arg}: {exc}")

    def _mark_ready(self, key: PeerKey) -> None:
        roster = self.mesh.roster
        if roster is None or roster.member(key) is None:
            return
        if key.raw not in self.ready:
            self.ready.add(key.raw)
            self.out(f"* {self.name(key)} is ready")
        if roster.full and all(m.key.raw in self.ready for m in roster.members):
            self._all_ready.set()

    def show_message(self, peer: PeerKey, message: Any) -> None:
        """One application message (docs/protocol.md 2.10). `ready` and `rules` are the
        lobby's own: a malformed one is dropped here and never reaches the match."""
        if tagged(message, "ready"):
            if is_ready(message):
                self._mark_ready(peer)
            return
        if not tagged(message, "chat"):
            if self.on_message is not None and self.on_message(peer, message):
                return
            if self._rules_shown(peer, message) or self._bots_marked(peer, message):
                return
            kept = tag_of(message) in MATCH_TAGS
            if kept and sum(k == peer for k, _ in self.backlog) < MAX_BACKLOG:
                self.backlog.append((peer, message))
            return
        text = chat_said(message)
        if text is not None:
            self.out(f"<{self.name(peer)}> {printable(text)}")

    def _rules_shown(self, peer: PeerKey, message: Any) -> bool:
        """The host's `["rules", preset, [overrides]]` (a full-screen host announces what it
        chose): shown as a notice; the genesis proposed at the start is what binds."""
        roster = self.mesh.roster
        if not tagged(message, "rules"):
            return False
        announced = rules_announced(message)
        if announced is None or roster is None or peer != roster.host.key:
            return True  # malformed, or not the host's: dropped
        preset, overrides = announced
        over = ", ".join(printable(o, 40) for o in overrides)
        self.out(f"* the host chose the rules: {printable(preset, 40)}"
                 + (f" with {over}" if over else ""))  # fmt: skip
        return True

    def _bots_marked(self, peer: PeerKey, message: Any) -> bool:
        """The host's `["bots", [key, ...]]`: the seats it names are marked as bots, the
        others no longer are. A malformed one, or anyone else's, is dropped with a notice
        naming its sender: it marks nothing and is not kept for the match. One that names a
        key our roster does not seat yet (the host's roster to us can trail its `bots`, for
        example after a reconnect) waits for the roster that seats it, as the latest word."""
        roster = self.mesh.roster
        if not tagged(message, "bots"):
            return False
        claimed = bots_claimed(message, peer, roster) if roster is not None else None
        if claimed is None:
            self.out(f"* dropped a bots message from {self.name(peer)} this client cannot take")
            return True
        self._bots_waiting = claimed
        self._mark_bots()
        return True

    def _mark_bots(self) -> None:
        """Mark the host's latest `bots` once our roster seats every key it names."""
        roster = self.mesh.roster
        waiting = self._bots_waiting
        if waiting is None or roster is None or not waiting <= {m.key.raw for m in roster.members}:
            return
        self._bots_waiting = None
        if waiting != self.bots:
            self.bots = waiting
            names = ", ".join(self.name(PeerKey(k)) for k in sorted(waiting, key=self._seat_of))
            self.out(f"* the host runs bots in these seats: {names or 'none'}")

    def _seat_of(self, key: bytes) -> int:
        roster = self.mesh.roster
        member = roster.member(PeerKey(key)) if roster is not None else None
        return member.seat if member is not None else 0

    async def announce_bots(self) -> None:
        """Host: tell every seated peer which seats are our bots (none: nothing is sent)."""
        roster = self.mesh.roster
        if not self.mesh.is_host or roster is None or not self.bots:
            await trio.lowlevel.checkpoint()
            return
        with contextlib.suppress(NetError):
            await self.mesh.broadcast(bots_message(self.bots, roster))

    def show_event(self, event: object) -> None:
        if isinstance(event, RosterChanged):
            self._mark_bots()
            # A roster whose seats are as shown (only an address changed: the host learnt a
            # public one, a relay) is not shown again.
            seating = (event.roster.seats,
                       tuple((m.seat, m.key, m.nickname) for m in event.roster.members))
            if seating != self._seating_shown:
                self._seating_shown = seating
                seated = f"{len(event.roster.members)}/{event.roster.seats}"
                self.out(f"* seated ({seated}):\n{self.seats_text()}")
            if event.roster.full and not self._announced_full:
                self._announced_full = True
                self.out("* every seat is taken: the table is complete")
        elif isinstance(event, PeerUp):
            how = self.mesh.how_linked(event.peer) or ("relayed by the host" if event.relayed
                                                       else "direct")  # fmt: skip
            self.out(f"* {self.name(event.peer)} connected ({how})")
        elif isinstance(event, PeerDown):
            self.out(f"* {self.name(event.peer)} disconnected")
        elif isinstance(event, StreamReset):
            # The peer came back without its saved delivery state: what it had not consumed
            # before it stopped may be gone, which the mesh cannot know, so say only this.
            self.out(f"* {self.name(event.peer)} restarted")
        elif isinstance(event, SeatFreed):
            how = "was removed by the host" if event.reason == "kicked" else "left the table"
            who = "you" if event.peer == self.mesh.me else printable(event.nickname, 40)
            self.out(f"* {who} ({event.peer.short()}) {how}: seat {event.seat + 1} is free")
            self.ready.discard(event.peer.raw)
        elif isinstance(event, NicknameChanged):
            self.out(
                f"* {printable(event.old, 40)} ({event.peer.short()}) is now called "
                f"{printable(event.new, 40)}"
            )

    async def run(
        self, lines: trio.MemoryReceiveChannel[str], *, quit_on_eof: bool = False
    ) -> int:
        """Until /quit, or (with `quit_on_eof`) the end of input.

        Without it the lobby outlives its input: a host started under `nohup` or with its
        input redirected keeps its table open for the others until it is stopped.
        """
        start = False
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._pump_messages)
            nursery.start_soon(self._pump_events)

            async def when_ready() -> None:
                nonlocal start
                await self._all_ready.wait()
                if _match_runner is not None:
                    start = True
                    nursery.cancel_scope.cancel()

            nursery.start_soon(when_ready)
            async for line in lines:
                if not await self.handle_line(line):
                    break
            else:
                if not quit_on_eof:
                    self._input_closed = True
                    if self._prompt is not None:
                        self._prompt.answer.send_nowait(False)
                        self._prompt = None
                    self.out(
                        "* input closed: staying at the table (stop with Ctrl-C or a signal); "
                        "join requests are declined"
                    )
                    await trio.sleep_forever()
            nursery.cancel_scope.cancel()
        if start and _match_runner is not None:
            self.out("* everyone is ready: the match starts")
            return await _match_runner(self.mesh, lines, self.backlog, self.out, self.bots)
        return 0

    async def _pump_messages(self) -> None:
        while True:
            peer, message = await self.mesh.receive()
            self.show_message(peer, message)

    async def _pump_events(self) -> None:
        while True:
            event = await self.mesh.next_event()
            self.show_event(event)
            if isinstance(event, RosterChanged) and self.mesh.me.raw in self.ready:
                # seats taken after we said ready must hear it too
                with contextlib.suppress(NetError):
                    await self.mesh.broadcast(["ready"])
            if isinstance(event, RosterChanged | StreamReset):
                # a seat taken, or a peer back without what it had heard: which are bots
                await self.announce_bots()
            if isinstance(event, RosterChanged) and self.on_seats is not None:
                seats = len(event.roster.members)
                if seats != self._seats_shown:
                    self._seats_shown = seats
                    with contextlib.suppress(NetError, OSError):
                        await self.on_seats(seats)
