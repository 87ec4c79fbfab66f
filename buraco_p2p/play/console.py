"""The line-mode table in a running match: typed commands in, table text out.

`console(driver, lines, write)` shows the events as they come, the table whenever it is our
turn, and turns typed lines into moves and chat. It returns when the match closes or the
input ends (`quit` or end of file): the match then stays in the data directory.
"""

from __future__ import annotations

from collections.abc import Callable

import trio

from buraco_p2p.engine import HandState, IllegalMove
from buraco_p2p.net.channel.identity import PeerKey
from buraco_p2p.net.reach.rejoin import looks_like_rejoin
from buraco_p2p.net.table.appmessages import printable
from buraco_p2p.play.driver import Driver, bot_parties, my_turn
from buraco_p2p.play.line import (
    HELP,
    LineError,
    Staging,
    describe_event,
    parse_command,
    render,
    render_pile,
    take_rejoin_code,
)
from buraco_p2p.session import Event, MoveApplied
from buraco_p2p.text.glyphs import Glyphs
from buraco_p2p.text.narration import Narrator
from buraco_p2p.text.words import explain

__all__ = ["console"]

Write = Callable[[str], None]


class _Console:
    def __init__(self, driver: Driver, write: Write, bot_keys: frozenset[bytes] = frozenset(),
                 bots: bool = False) -> None:  # fmt: skip
        self.driver = driver
        self.write = write
        self.bot_keys = bot_keys
        self.bots = bots
        self.terms = driver.peer.table.terms
        self.shown_turn = -1
        self.staging = Staging()  # melds held toward the opening, not sent
        # Moves are told in the ui's words; cards as letters (AD, TH), as commands take them.
        deck = driver.peer.table.rules.deck_size
        self.narrator = Narrator(self.seat_name, Glyphs(ascii=True, deck_size=deck))
        self.narrator.follow(driver.peer.table.view)  # a resumed table: from now on

    def seat_name(self, seat: int) -> str:
        t = self.driver.peer.table
        if not t.seating:
            return f"seat {seat + 1}"
        return "you" if t.seating[seat] == self.driver.peer.party else self.nick(t.seating[seat])

    def nick(self, party: int) -> str:
        return self.terms.nicknames[party]

    def names(self) -> list[str]:
        t = self.driver.peer.table
        if not t.seating:
            return list(self.terms.nicknames)
        me = self.driver.peer.party
        bots = bot_parties(self.driver.peer, self.bot_keys, self.bots)
        return [self.nick(p) + (" (you)" if p == me else " (bot)" if p in bots else "")
                for p in t.seating]  # fmt: skip

    def who(self) -> str:
        """Each seat (each party before the seats are drawn), its fingerprint and how our
        link to it was made (`Mesh.how_linked`: direct, mapped, punched, via the host ...)."""
        peer, mesh = self.driver.peer, self.driver.mesh
        t = peer.table
        parties = list(t.seating) if t.seating else list(range(len(self.terms.keys)))
        names = self.names() if t.seating else [self.nick(p) for p in parties]
        lines = []
        for n, (party, name) in enumerate(zip(parties, names, strict=True), 1):
            key = self.terms.keys[party]
            if party == peer.party:
                state = ""
            elif not mesh.is_up(key):
                state = "  [offline]"
            else:
                state = f"  [{mesh.how_linked(key) or 'linked'}]"
            where = f"seat {n}" if t.seating else f"player {n}"
            lines.append(f"  {where}: {printable(name, 60)}  {key.fingerprint()}{state}")
        return "\n".join(lines)

    def on_events(self, events: list[Event]) -> None:
        view = self.driver.peer.table.view
        told = False
        for ev in events:
            if isinstance(ev, MoveApplied) and not told:
                self.tell_moves(view)
                told = True
            text = describe_event(ev, self.names(), view, self.nick)
            if text is not None:
                self.write(text)
        self.tell_moves(view)  # a card of ours revealed since: our draw, told with it
        if not my_turn(self.driver.peer):
            self.staging.forget()  # staged melds end with the turn that staged them
        self.maybe_show()

    def tell_moves(self, view: HandState | None) -> None:
        for step in self.narrator.follow(view):
            for line in step.lines:
                self.write(line)

    def on_chat(self, key: PeerKey, text: str) -> None:
        who = [k.raw for k in self.terms.keys].index(key.raw) if key in self.terms.keys else -1
        # The text is the peer's: shown only once it cannot drive our terminal.
        self.write(f"<{self.nick(who) if who >= 0 else key.short()}> {printable(text)}")

    def show(self) -> None:
        peer = self.driver.peer
        view, seat = peer.table.view, peer.table.my_seat
        if view is None or seat is None:
            self.write("no hand in play yet")
            return
        self.write(render(view, seat, self.names()))
        staged = self.staging.describe(view, seat)
        if staged:
            self.write(staged)

    def why_not_now(self) -> str:
        """Why a move cannot be made now, in words: whose turn it is, or the hand is over."""
        view = self.driver.peer.table.view
        if view is None or view.ended:
            return "the hand is over: the next one is being dealt"
        if view.turn == self.driver.peer.table.my_seat:
            return "your turn: the table is still receiving the last cards revealed"
        return f"it is {self.seat_name(view.turn)}'s turn, not yours"

    def maybe_show(self) -> None:
        peer = self.driver.peer
        at = len(peer.log)
        if my_turn(peer) and self.shown_turn != at:
            self.shown_turn = at
            self.show()
            self.write("your move (help lists the commands)")

    def command(self, line: str) -> bool:
        """Handle one typed line; False to leave."""
        words = line.split()
        if not words:
            return True
        cmd = words[0].lower()
        if cmd in ("quit", "exit"):
            return False
        if cmd == "help":
            self.write(HELP)
        elif cmd == "show":
            self.show()
        elif cmd == "pile" and len(words) == 1:
            view = self.driver.peer.table.view
            self.write("no hand in play yet" if view is None else render_pile(view, self.names()))
        elif cmd in ("who", "/who") and len(words) == 1:
            self.write(self.who())
        elif cmd in ("end", "void", "replace") and len(words) == 1:
            self.write(self.driver.agree(cmd))
        elif cmd in ("say", "chat"):
            self.driver.chat(line.split(None, 1)[1] if len(words) > 1 else "")
        else:
            peer = self.driver.peer
            view, seat = peer.table.view, peer.table.my_seat
            if view is None or seat is None:
                self.write("no hand in play yet: the table is dealing")
                return True
            try:
                staged = self.staging.command(line, view, seat) if my_turn(peer) else None
                move = parse_command(line, view, seat) if staged is None else staged[0]
            except LineError as exc:
                self.write(f"refused: {exc}")
                return True
            if staged is not None and staged[1]:
                self.write(staged[1])
            if move is None:
                return True
            if staged is None and not my_turn(peer):
                self.write(self.why_not_now())
                return True
            err = view.check(move)  # the engine's own reason, before anything is signed
            if err is not None:
                self.write(f"refused: {explain(err, view, self.narrator.glyphs)}")
                return True
            try:
                self.driver.play(move)
            except IllegalMove as exc:
                self.write(f"refused: {explain(exc, view, self.narrator.glyphs)}")
        return True


async def console(
    driver: Driver,
    lines: trio.MemoryReceiveChannel[str],
    write: Write,
    *,
    bot_keys: frozenset[bytes] = frozenset(),
    bots: bool = False,
) -> bool:
    """Run the table until the match closes (True) or the input ends or says quit (False).

    Seats played by a bot are named "(bot)": the bot peers we started (`bot_keys`, or every
    other seat with `bots`) and the heirs a `replace` seated (see `bot_parties`)."""
    c = _Console(driver, write, bot_keys, bots)
    driver.on_events = c.on_events
    driver.on_chat = c.on_chat
    c.maybe_show()
    async with trio.open_nursery() as nursery:
        closed = False

        async def watch() -> None:
            nonlocal closed
            await driver.wait_until(lambda p: p.table.closed)
            closed = True
            # our last entries reach the others before we leave (or wait in our log for
            # `resume` to send them, if a party does not claim them in time)
            await driver.delivered(driver.peer.table.terms.timeout_ms / 1000)
            nursery.cancel_scope.cancel()

        nursery.start_soon(watch)
        async for line in lines:
            if looks_like_rejoin(line):  # a host whose address changed (docs/protocol.md 2.15)
                write(take_rejoin_code(driver.mesh.moves, line))
                continue
            if not c.command(line):
                break
            c.maybe_show()
        nursery.cancel_scope.cancel()
    return closed
