"""The lobby: `buraco-p2p host` / `buraco-p2p join`, a plain line interface while seats fill.

Everyone sees who is seated (and who is connected) and can chat; the host answers each
join request with y/n (or passes `--auto-approve`). Lines starting with `/` are commands:
`/who` lists the seats, `/quit` leaves. The lobby logic (`Lobby`) takes its input lines
and output function from the caller, so it runs the same in a terminal and in tests.

Everything shown on screen that came from the network (nicknames, chat text) is stripped
of control characters first: a peer must not be able to rewrite another player's terminal.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import trio

from buraco_p2p.net.errors import NetError
from buraco_p2p.net.identity import Identity, PeerKey, load_or_create_identity
from buraco_p2p.net.invite import Endpoint, Invite, InviteError
from buraco_p2p.net.mesh import (
    JoinRequest,
    Mesh,
    PeerDown,
    PeerUp,
    RosterChanged,
    StreamReset,
    auto_approve,
    host_table,
    join_table,
)
from buraco_p2p.net.table import JoinRefused

MAX_CHAT = 500
Output = Callable[[str], None]


def printable(text: str, limit: int = MAX_CHAT) -> str:
    """`text` with every control/format character replaced, cut to `limit` characters."""
    return "".join(ch if ch.isprintable() else "\ufffd" for ch in text[:limit])


class Lobby:
    """One terminal's lobby over a running mesh."""

    def __init__(self, mesh: Mesh, out: Output) -> None:
        self.mesh = mesh
        self.out = out
        self._answer: trio.MemorySendChannel[bool] | None = None
        self._announced_full = False
        # Called with the number of seated players when it changes (the LAN announcement).
        self.on_seats: Callable[[int], Awaitable[None]] | None = None
        self._seats_shown = 0

    def name(self, key: PeerKey) -> str:
        roster = self.mesh.roster
        member = roster.member(key) if roster else None
        return printable(member.nickname, 40) if member else key.short()

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
                relay = " [via host]" if self.mesh.is_relayed(m.key) else ""
                lines.append(
                    f"  seat {seat + 1}: {printable(m.nickname, 40)}{you}  "
                    f"{m.key.fingerprint()}{state}{relay}"
                )
            else:
                lines.append(f"  seat {seat + 1}: (empty)")
        return "\n".join(lines)

    async def approve(self, request: JoinRequest) -> bool:
        """Ask the person at the host's terminal; the next input line answers."""
        send, recv = trio.open_memory_channel[bool](1)
        self._answer = send
        self.out(
            f"* {printable(request.nickname, 40)} ({request.key.fingerprint()}) asks to join. "
            "Seat them? [y/n]"
        )
        try:
            return await recv.receive()
        except trio.Cancelled:
            # The joiner hung up (or we are leaving): the question no longer stands.
            self.out(f"* {printable(request.nickname, 40)} is no longer waiting for an answer.")
            raise
        finally:
            self._answer = None

    async def handle_line(self, line: str) -> bool:
        """One line typed by the user; False when they want to leave."""
        text = line.strip()
        if self._answer is not None:
            self._answer.send_nowait(text.lower() in ("y", "yes"))
            return True
        if not text:
            return True
        if text == "/quit":
            return False
        if text == "/who":
            self.out(self.seats_text())
            return True
        if text.startswith("/"):
            self.out("* commands: /who, /quit; anything else is chat")
            return True
        await self.mesh.broadcast(["chat", text[:MAX_CHAT]])
        self.out(f"<{self.mesh.identity.nickname}> {printable(text)}")
        return True

    def show_message(self, peer: PeerKey, message: Any) -> None:
        if (
            isinstance(message, list)
            and len(message) == 2
            and message[0] == "chat"
            and isinstance(message[1], str)
        ):
            self.out(f"<{self.name(peer)}> {printable(message[1])}")

    def show_event(self, event: object) -> None:
        if isinstance(event, RosterChanged):
            seated = f"{len(event.roster.members)}/{event.roster.seats}"
            self.out(f"* seated ({seated}):\n{self.seats_text()}")
            if event.roster.full and not self._announced_full:
                self._announced_full = True
                self.out(f"* all {event.roster.seats} seats are taken: the table is complete")
        elif isinstance(event, PeerUp):
            how = " via the host" if event.relayed else ""
            self.out(f"* {self.name(event.peer)} connected{how}")
        elif isinstance(event, PeerDown):
            self.out(f"* {self.name(event.peer)} disconnected")
        elif isinstance(event, StreamReset):
            self.out(f"* {self.name(event.peer)} restarted and lost some messages")

    async def run(self, lines: trio.MemoryReceiveChannel[str]) -> None:
        """Until /quit or the end of input."""
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._pump_messages)
            nursery.start_soon(self._pump_events)
            async for line in lines:
                if not await self.handle_line(line):
                    break
            nursery.cancel_scope.cancel()

    async def _pump_messages(self) -> None:
        while True:
            peer, message = await self.mesh.receive()
            self.show_message(peer, message)

    async def _pump_events(self) -> None:
        while True:
            event = await self.mesh.next_event()
            self.show_event(event)
            if isinstance(event, RosterChanged) and self.on_seats is not None:
                seats = len(event.roster.members)
                if seats != self._seats_shown:
                    self._seats_shown = seats
                    with contextlib.suppress(NetError, OSError):
                        await self.on_seats(seats)


# -- terminal plumbing ---------------------------------------------------------------------


async def _stdin_lines(send: trio.MemorySendChannel[str]) -> None:
    """Lines from standard input, without blocking trio (works for ttys and pipes)."""
    stream = trio.lowlevel.FdStream(os.dup(sys.stdin.fileno()))
    buffer = b""
    async with send, stream:
        while True:
            data = await stream.receive_some(4096)
            if not data:
                if buffer:
                    await send.send(buffer.decode("utf-8", "replace"))
                return
            buffer += data
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                await send.send(line.decode("utf-8", "replace"))
            if len(buffer) > 64 * 1024:
                buffer = b""


def _print(text: str) -> None:
    print(text, flush=True)


def _identity(args: argparse.Namespace) -> Identity:
    config = Path(args.config_dir) if args.config_dir else None
    return load_or_create_identity(config, args.nick)


@contextlib.asynccontextmanager
async def _maybe_upnp(enabled: bool, port: int) -> AsyncIterator[Endpoint | None]:
    if not enabled:
        yield None
        return
    from buraco_p2p.net.upnp import upnp_mapping

    async with upnp_mapping(port) as mapping:
        yield mapping.external


async def _host_main(args: argparse.Namespace) -> int:
    identity = _identity(args)
    send, recv = trio.open_memory_channel[str](16)
    lobby_box: list[Lobby] = []

    async def approve(request: JoinRequest) -> bool:
        if args.auto_approve:
            return await auto_approve(request)
        return await lobby_box[0].approve(request)

    async with host_table(
        identity, listen_host=args.listen, port=args.port, approve=approve
    ) as mesh:
        lobby = Lobby(mesh, _print)
        lobby_box.append(lobby)
        port = mesh.advertised[0].port if mesh.advertised else args.port
        async with _maybe_upnp(args.upnp, port) as public:
            if public is not None:
                mesh.advertise_also(public)
            invite = mesh.invite
            _print(f"table created; you are {identity.nickname} ({identity.public.fingerprint()})")
            _print("invite code (give it to the other three players):")
            _print(invite.to_text())
            async with contextlib.AsyncExitStack() as stack:
                if args.lan:
                    from buraco_p2p.net.discovery import announce_table

                    announcement = await stack.enter_async_context(
                        announce_table(invite, identity.nickname, port)
                    )
                    lobby.on_seats = announcement.update
                    _print("* announced on the local network")
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(_stdin_lines, send)
                    await lobby.run(recv)
                    nursery.cancel_scope.cancel()
    return 0


async def _pick_lan_table() -> Invite:
    from buraco_p2p.net.discovery import browse_tables

    _print("* looking for tables on the local network ...")
    tables = await browse_tables()
    if not tables:
        raise NetError("no table announced on the local network")
    for n, table in enumerate(tables, 1):
        _print(
            f"  {n}. {printable(table.host_nickname, 40)} ({table.host_fingerprint}) "
            f"{table.seats_taken}/4 seated"
        )
    if len(tables) == 1:
        return tables[0].invite
    _print("which table? (number)")
    send, recv = trio.open_memory_channel[str](1)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(_stdin_lines, send)
        choice = await recv.receive()
        nursery.cancel_scope.cancel()
    try:
        return tables[int(choice) - 1].invite
    except (ValueError, IndexError) as exc:
        raise NetError(f"no table number {choice!r}") from exc


async def _join_main(args: argparse.Namespace) -> int:
    identity = _identity(args)
    if args.lan:
        invite = await _pick_lan_table()
    elif args.code:
        invite = Invite.from_text(args.code)
    else:
        raise NetError("give an invite code, or --lan to look for tables on the local network")
    _print(
        f"joining as {identity.nickname} ({identity.public.fingerprint()}); host fingerprint "
        f"{PeerKey(invite.host_key).fingerprint()}; waiting for the host to seat you ..."
    )
    send, recv = trio.open_memory_channel[str](16)
    async with join_table(identity, invite, listen_host=args.listen, port=args.port) as mesh:
        lobby = Lobby(mesh, _print)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_stdin_lines, send)
            await lobby.run(recv)
            nursery.cancel_scope.cancel()
    return 0


def _run(main: Callable[[argparse.Namespace], Any], args: argparse.Namespace) -> int:
    try:
        code: int = trio.run(main, args)
        return code
    except JoinRefused as exc:
        print(f"buraco-p2p: {exc}", file=sys.stderr)
        return 3
    except (NetError, InviteError) as exc:
        print(f"buraco-p2p: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--nick", help="your nickname (stored with your identity)")
    parser.add_argument(
        "--listen",
        default="",
        help="address to listen on (default: every interface, IPv4 and IPv6)",
    )
    parser.add_argument("--port", type=int, default=0, help="TCP port (default: any free one)")
    parser.add_argument(
        "--config-dir", help="where your identity is kept (default: the user config dir)"
    )
    parser.add_argument(
        "--lan", action="store_true", help="use mDNS on the local network (multicast)"
    )


def register(subparsers: Any) -> None:
    """Add the `host` and `join` commands to the `buraco-p2p` command line."""
    host = subparsers.add_parser("host", help="create a table and wait for three players")
    _common(host)
    host.add_argument(
        "--auto-approve", action="store_true", help="seat every joiner without asking"
    )
    host.add_argument(
        "--upnp", action="store_true", help="map the port on the router with UPnP (multicast)"
    )
    host.set_defaults(func=lambda args: _run(_host_main, args))
    join = subparsers.add_parser("join", help="join a table with an invite code")
    _common(join)
    join.add_argument("code", nargs="?", help="the invite code from the host")
    join.set_defaults(func=lambda args: _run(_join_main, args))
