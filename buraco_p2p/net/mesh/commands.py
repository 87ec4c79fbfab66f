"""`buraco-p2p host` and `buraco-p2p join`: the command line around the lobby.

Everything a person types here is checked before any socket is opened, and every failure
a person can cause or meet (a port out of range or in use, an address that is not this
machine's, an unreachable host) ends in one line naming the problem, never a traceback:
exit code 2 for a command line that cannot work, 1 for a network failure, 3 when the host
refuses us or frees our seat while we wait in the lobby. A joiner that cannot reach the host
keeps trying, with a growing pause, rather than exiting: the host may not be listening yet, or
may be busy with a flood of strangers. `exit_status` is that mapping, shared with the
full-screen client so both front ends end a failure with the same line and code.
The lobby outlives its standard input, so `nohup buraco-p2p host ... </dev/null` keeps the
table open.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import errno
import functools
import ipaddress
import logging
import os
import signal
import socket
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import trio

from buraco_p2p.net.channel.errors import IdentityError, MeshError, NetError
from buraco_p2p.net.channel.identity import Identity, PeerKey, load_or_create_identity
from buraco_p2p.net.mesh.events import SeatFreed
from buraco_p2p.net.mesh.lobby import Lobby
from buraco_p2p.net.mesh.mesh import JoinRequest, Mesh, auto_approve
from buraco_p2p.net.mesh.moving import Probe, keep_address, mapping_probe, stun_probe
from buraco_p2p.net.mesh.startup import host_table, join_table
from buraco_p2p.net.reach.invite import Endpoint, Invite, InviteError
from buraco_p2p.net.reach.shortcode import ShortCode, fetch_invite, is_short_code
from buraco_p2p.net.reach.turnwire import TurnServer
from buraco_p2p.net.table.appmessages import printable
from buraco_p2p.net.table.table import KICKED, JoinRefused

if TYPE_CHECKING:
    from buraco_p2p.net.mesh.wayout import JoinerWords

__all__ = [
    "JoinerLobby", "ReachOutput", "SeatLost", "UsageError", "exit_status", "joiner_reach",
    "register",
]  # fmt: skip

T = TypeVar("T")

EXIT_NETWORK = 1
EXIT_USAGE = 2
EXIT_REFUSED = 3
EXIT_DATA = 4
EXIT_INTERRUPTED = 130
# A joiner's pause between attempts to reach the host: doubling, capped.
RETRY_FIRST = 1.0
RETRY_MAX = 30.0


class UsageError(Exception):
    """The command line asks for something that cannot work (exit code 2)."""


class SeatLost(JoinRefused):
    """The host freed our seat while we waited in the lobby (exit code 3, as a refusal)."""


def exit_status(
    exc: BaseException, data_errors: tuple[type[BaseException], ...] = ()
) -> tuple[int, str] | None:
    """The exit code and the one line for a failure a person can cause or meet, or None
    for anything else (a bug: it keeps its traceback). A group of one (trio's nurseries
    wrap every error) stands for its failure. `data_errors` are the caller's errors for a
    saved file that cannot be used (the layers above the network own those files)."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    if data_errors and isinstance(exc, data_errors):
        return EXIT_DATA, str(exc)
    if isinstance(exc, (UsageError, IdentityError)):
        return EXIT_USAGE, str(exc)
    if isinstance(exc, JoinRefused):
        return EXIT_REFUSED, str(exc)
    if isinstance(exc, (NetError, InviteError)):
        return EXIT_NETWORK, str(exc)
    if isinstance(exc, OSError):
        return EXIT_NETWORK, f"{exc.strerror or exc}"
    if isinstance(exc, KeyboardInterrupt):
        return EXIT_INTERRUPTED, ""
    return None


def run_reporting(
    main: Callable[[], int],
    prog: str = "buraco-p2p",
    data_errors: tuple[type[BaseException], ...] = (),
) -> int:
    """`main()`'s exit code, or a failure's (`exit_status`) after its line on stderr."""
    try:
        return main()
    except BaseException as exc:
        status = exit_status(exc, data_errors)
        if status is None:
            raise
        code, text = status
        if text:
            print(f"{prog}: {text}", file=sys.stderr, flush=True)
        return code


class JoinerLobby(Lobby):
    """A joiner's lobby, which ends (`SeatLost`) when the host frees our seat: a kicked
    joiner is told why and leaves, instead of staying at a table that no longer has it."""

    def __init__(self, mesh: Mesh, out: Callable[[str], None]) -> None:
        super().__init__(mesh, out)
        self.lost: SeatFreed | None = None
        self._lost = trio.Event()

    def show_event(self, event: object) -> None:
        super().show_event(event)
        if isinstance(event, SeatFreed) and event.peer == self.mesh.me:
            self.lost = event
            self._lost.set()

    async def seated(self, body: Callable[[], Awaitable[T]]) -> T:
        """`body()`'s result, unless our seat is freed first: then `SeatLost`."""
        result: list[T] = []
        async with trio.open_nursery() as nursery:

            async def watch() -> None:
                await self._lost.wait()
                nursery.cancel_scope.cancel()

            nursery.start_soon(watch)
            result.append(await body())
            nursery.cancel_scope.cancel()
        if result:
            return result[0]
        assert self.lost is not None
        how = "removed you from the table" if self.lost.reason == KICKED else "freed your seat"
        raise SeatLost(f"the host {how} (seat {self.lost.seat + 1} is free again)")


def check_port(text: str | int) -> int:
    """A TCP port number 0..65535 (0: any free port), or `UsageError` naming the problem."""
    try:
        port = int(text)
    except (TypeError, ValueError):
        raise UsageError(f"--port {text!r} is not a number") from None
    if not 0 <= port <= 65535:
        raise UsageError(f"--port {port} is out of range: a TCP port is 0..65535")
    return port


def check_listen(text: str) -> str:
    """'' (every interface) or a numeric IP address; never a name (no DNS lookup)."""
    if text == "":
        return text
    try:
        return str(ipaddress.ip_address(text.strip("[]")))
    except ValueError:
        raise UsageError(
            f"--listen {text!r} is not a numeric IP address (e.g. 0.0.0.0, ::, 192.168.1.20)"
        ) from None


def check_can_listen(host: str, port: int) -> None:
    """Fail now, in one line, if we cannot listen on `host`:`port` (in use, not ours)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    where = f"[{host or '::'}]" if family == socket.AF_INET6 else (host or "0.0.0.0")
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host or "0.0.0.0", port))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                why = "the port is in use by another program"
            elif exc.errno == errno.EADDRNOTAVAIL:
                why = "that address is not one of this machine's"
            elif exc.errno == errno.EACCES:
                why = "permission denied (ports below 1024 need privileges)"
            else:
                why = exc.strerror or str(exc)
            raise UsageError(f"cannot listen on {where}:{port}: {why}") from None


# -- terminal plumbing ---------------------------------------------------------------------


async def _stdin_lines(send: trio.MemorySendChannel[str]) -> None:
    """Lines from standard input, without blocking trio (works for ttys and pipes).

    Ends (closing `send`) at the end of input, or at once if there is no standard input.
    """
    try:
        fd = os.dup(sys.stdin.fileno())
    except (OSError, ValueError, AttributeError):
        await send.aclose()
        return
    stream = trio.lowlevel.FdStream(fd)
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


@dataclasses.dataclass
class ReachOutput:
    """Where a host's `--internet`/`--upnp`/`--stun` steps report: the line client prints
    (the defaults); the full-screen lobby draws each in its place. `mapping` gets the port
    mapping's state in a few words as it changes ("asking the router ...", "mapped by PCP:
    ADDRESS", "none (PCP/NAT-PMP: why; UPnP: why)"); `invite` is called when the invite has
    gained an address (UPnP answers late)."""

    say: Callable[[str], None] = _print
    invite: Callable[[Mesh], None] = dataclasses.field(default_factory=lambda: show_invite)
    mapping: Callable[[str], None] = lambda text: None


async def _upnp_later(mesh: Mesh, port: int, out: ReachOutput, pcp: str) -> None:
    """`--internet` without PCP/NAT-PMP: ask UPnP while the table is already open (its
    discovery takes seconds), and once the router maps the port, hold the mapping for the
    table's life and print the invite again with it."""
    from buraco_p2p.net.reach.upnp import UpnpError, upnp_mapping

    try:
        async with upnp_mapping(port) as mapping:
            mesh.advertise_also(mapping.external)
            out.mapping(f"mapped by UPnP: {mapping.external}")
            out.say(f"* port mapped by UPnP: {mapping.external}; the invite with it, for "
                    "players outside your network:")  # fmt: skip
            out.invite(mesh)
            await trio.sleep_forever()
    except UpnpError as exc:
        out.mapping(f"none (PCP/NAT-PMP: {pcp}; UPnP: {exc})")
        out.say(f"* no UPnP port mapping: {exc}")


@contextlib.asynccontextmanager
async def host_reach(
    mesh: Mesh, port: int, args: argparse.Namespace, out: ReachOutput | None = None
) -> AsyncIterator[None]:
    """A host's `--upnp`, `--internet` and `--stun`, for as long as the table runs: says what
    will be contacted, then maps `port` on the router and learns the public address, each
    advertised in the invite. `--upnp` (asked for by name) waits for its mapping and fails
    without it; `--internet` takes a PCP/NAT-PMP mapping (answered within a few seconds) and
    otherwise asks UPnP in the background, so the invite is printed at once with what is
    known, and again when a mapping comes. `out` says where all of it is reported."""
    out = out or ReachOutput()
    stun = _stun_servers(args)
    turn = turn_servers(args)
    probe: Probe | None = None
    if args.internet or args.upnp or stun or turn:
        from buraco_p2p.net.mesh.internet import contact_line

        out.say(contact_line(args.internet, args.upnp, stun, turn))
    try:
        async with contextlib.AsyncExitStack() as stack:
            if args.upnp:
                from buraco_p2p.net.reach.upnp import upnp_mapping

                out.mapping("asking the router (UPnP)")
                mapping = await stack.enter_async_context(upnp_mapping(port))
                mesh.advertise_also(mapping.external)
                out.mapping(f"mapped by UPnP: {mapping.external}")
                out.say(f"* port mapped by UPnP: {mapping.external}")
            elif args.internet:
                # A PCP/NAT-PMP mapping is renewed while the table runs and deleted when it ends.
                from buraco_p2p.net.reach.portmap import PortMapError, hold_mapping

                out.mapping("asking the router (PCP, NAT-PMP)")
                try:
                    held = await stack.enter_async_context(hold_mapping(port, say=out.say))
                except PortMapError as exc:
                    out.mapping(f"asking UPnP (PCP/NAT-PMP: {exc})")
                    out.say(f"* no PCP/NAT-PMP mapping: {exc}; asking UPnP meanwhile")
                    nursery = await stack.enter_async_context(trio.open_nursery())
                    nursery.start_soon(_upnp_later, mesh, port, out, str(exc))
                    stack.callback(nursery.cancel_scope.cancel)
                else:
                    mesh.advertise_also(held.mapping.external)
                    external = held.mapping.external
                    out.mapping(f"mapped by {held.mapping.protocol}: {external}")
                    out.say(f"* port mapped by {held.mapping.protocol}: {external}")
                    probe = mapping_probe(held)
            if stun:
                from buraco_p2p.net.mesh.internet import learn_public_address

                await learn_public_address(mesh, port, stun, out.say, relay=bool(turn))
                probe = probe or stun_probe(port, stun[0])
            if turn:
                from buraco_p2p.net.mesh.turning import keep_relay

                await mesh.nursery.start(
                    functools.partial(keep_relay, advertise=True), mesh, turn, out.say
                )
            if probe is not None:
                await _watch_address(mesh, probe, stack, out.say)
            yield
    except BaseExceptionGroup as group:  # the body's own error comes out unwrapped
        if len(group.exceptions) == 1:
            raise group.exceptions[0] from None
        raise


async def _watch_address(
    mesh: Mesh, probe: Probe, stack: contextlib.AsyncExitStack, say: Callable[[str], None]
) -> None:
    """Host: check our public address again when a link drops (and now and then); when the
    router renumbered, the table moves (moving.py) and we print the re-join code."""

    def announce(code: str) -> None:
        # What the router or STUN says now: our LAN address is no public one.
        latest = mesh.moves.latest
        now = ", ".join(str(ep) for ep in (latest.addresses if latest else mesh.advertised[:1]))
        say(f"* your public address changed (now {now}); the table is finding its "
            "players again. A player whose link does not come back pastes this re-join code:")
        say(code)

    mesh.moves.announce = announce
    nursery = await stack.enter_async_context(trio.open_nursery())
    stack.callback(nursery.cancel_scope.cancel)
    nursery.start_soon(functools.partial(keep_address, mesh, probe, on_error=say))


def show_invite(mesh: Mesh) -> None:
    """The table's invite code and its short code, as a host prints them, and a word if
    they lead only to addresses inside the host's network."""
    from buraco_p2p.net.mesh.wayout import host_reach_note

    invite = mesh.invite
    _print("invite code (give it to the other players):")
    _print(invite.to_text())
    short = ShortCode.for_invite(invite)
    if short is not None:
        _print("short code (to read aloud; joiners then compare your fingerprint):")
        _print(short.to_text())
    note = host_reach_note(invite)
    if note is not None:
        _print(note)


async def _host_main(args: argparse.Namespace) -> int:
    from buraco_p2p.net.mesh.internet import answer_reply_code
    from buraco_p2p.net.mesh.wayout import PastedCode, tell_empty_seats

    _stun_servers(args)  # a --stun or --turn that cannot work fails before any socket opens
    turn_servers(args)
    identity = _identity(args)
    send, recv = trio.open_memory_channel[str](16)
    lobby_box: list[Lobby] = []

    async def approve(request: JoinRequest) -> bool:
        if args.auto_approve:
            return await auto_approve(request)
        return await lobby_box[0].approve(request)

    async with host_table(
        identity, listen_host=args.listen, port=args.port, approve=approve, seats=args.seats
    ) as mesh:
        lobby = Lobby(mesh, _print)
        lobby_box.append(lobby)
        port = mesh.advertised[0].port if mesh.advertised else args.port
        async with host_reach(mesh, port, args):
            invite = mesh.invite
            _print(f"table created; you are {identity.nickname} ({identity.public.fingerprint()})")
            show_invite(mesh)
            async with contextlib.AsyncExitStack() as stack:
                if args.lan:
                    from buraco_p2p.net.reach.discovery import announce_table

                    announcement = await stack.enter_async_context(
                        announce_table(invite, identity.nickname, port, seats=args.seats)
                    )
                    lobby.on_seats = announcement.update
                    _print("* announced on the local network")
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(_stdin_lines, send)
                    lines, lobby_recv = trio.open_memory_channel[str](16)
                    pasted: list[PastedCode] = []

                    async def reply(text: str) -> None:
                        await answer_reply_code(mesh, port, text, _print, pasted=pasted)

                    nursery.start_soon(_route_reply_codes, recv, lines, nursery, reply)
                    # after the first minute: the seats still empty, and what we know of why
                    nursery.start_soon(tell_empty_seats, mesh, _print, pasted)
                    await lobby.run(lobby_recv)
                    nursery.cancel_scope.cancel()
    return 0


def _stun_servers(args: argparse.Namespace) -> list[Endpoint]:
    from buraco_p2p.net.mesh.internet import StunServerError, parse_stun_server

    try:
        return [parse_stun_server(text) for text in args.stun or ()]
    except StunServerError as exc:
        raise UsageError(str(exc)) from None


def turn_servers(args: argparse.Namespace) -> list[TurnServer]:
    """The `--turn` servers, parsed without any name lookup; `UsageError` for a bad one."""
    from buraco_p2p.net.reach.turnwire import TurnOptionError, parse_turn_server

    try:
        return [parse_turn_server(text) for text in getattr(args, "turn", None) or ()]
    except TurnOptionError as exc:
        raise UsageError(str(exc)) from None


def joiner_reach(
    args: argparse.Namespace,
    invite: Invite,
    say: Callable[[str], None],
    words: JoinerWords | None = None,
) -> Callable[[Mesh, int], Awaitable[None]] | None:
    """A joiner's `--internet`/`--stun`/`--turn`, for either front end: says now what will be
    contacted, and returns the step to run before each attempt to dial the host (a TURN
    relay of our own, learn our public address, `say` a reply code for the host to paste,
    punch toward it), or None when there is nothing to do. Our NAT class, once learnt, goes
    to `words` for the advice after the first minute."""
    stun = _stun_servers(args)
    turn = turn_servers(args)
    if getattr(args, "internet", False) or stun or turn:
        from buraco_p2p.net.mesh.internet import contact_line

        say(contact_line(False, False, stun, turn))
    if not (stun or turn):
        return None

    async def before_dial(mesh: Mesh, port: int) -> None:
        from buraco_p2p.net.mesh.internet import prepare_reply_code
        from buraco_p2p.net.mesh.turning import keep_relay

        if turn:
            await mesh.nursery.start(
                functools.partial(keep_relay, advertise=False), mesh, turn, say
            )
        await prepare_reply_code(mesh, port, invite, stun, say, words)

    return before_dial


async def _route_reply_codes(
    recv: trio.MemoryReceiveChannel[str],
    lobby: trio.MemorySendChannel[str],
    nursery: trio.Nursery,
    on_reply: Callable[[str], Any],
) -> None:
    """Host input: a pasted reply code (`BRR-...`) is answered; every other line is the lobby's."""
    async with lobby:
        async for line in recv:
            if line.strip().upper().startswith("BRR-"):
                nursery.start_soon(on_reply, line.strip())
            else:
                await lobby.send(line)


async def _pick_lan_table() -> Invite:
    from buraco_p2p.net.reach.discovery import browse_tables

    _print("* looking for tables on the local network ...")
    tables = await browse_tables()
    if not tables:
        raise NetError("no table announced on the local network")
    for n, table in enumerate(tables, 1):
        _print(
            f"  {n}. {printable(table.host_nickname, 40)} ({table.host_fingerprint}) "
            f"{table.seats_taken}/{table.seats} seated"
        )
    if len(tables) == 1:
        return tables[0].invite
    _print("which table? (number)")
    send, recv = trio.open_memory_channel[str](1)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(_stdin_lines, send)
        try:
            choice = await recv.receive()
        except trio.EndOfChannel:
            raise NetError("no table chosen (the input ended)") from None
        nursery.cancel_scope.cancel()
    try:
        return tables[int(choice) - 1].invite
    except (ValueError, IndexError) as exc:
        raise NetError(f"no table number {choice!r}") from exc


async def _fetch_short(text: str, identity: Identity) -> Invite:
    """The full invite, from the host a short code names (one attempt: a wrong secret or a
    wrong address does not get better by retrying)."""
    code = ShortCode.from_text(text)
    _print(f"* asking the host at {code.endpoint} for the full invite ...")
    invite = await fetch_invite(code, identity)
    _print(
        "* short code accepted; the host was not known in advance: compare its fingerprint "
        "below with the host's, by voice"
    )
    return invite


async def _join_main(args: argparse.Namespace) -> int:
    identity = _identity(args)
    if args.lan:
        invite = await _pick_lan_table()
    elif args.code and is_short_code(args.code):
        invite = await _fetch_short(args.code, identity)
    elif args.code:
        invite = Invite.from_text(args.code)
    else:
        raise UsageError("give an invite code, or --lan to look for tables on the local network")
    from buraco_p2p.net.mesh.wayout import JoinerWords

    words = JoinerWords(invite, _print)
    before_dial = joiner_reach(args, invite, _print, words)
    _print(
        f"joining as {identity.nickname} ({identity.public.fingerprint()}); host fingerprint "
        f"{PeerKey(invite.host_key).fingerprint()}; waiting for the host to seat you ..."
    )
    send, recv = trio.open_memory_channel[str](16)
    async with words.watching() as watch:  # after the first minute: why, what would help
        delay = RETRY_FIRST
        while True:
            seated = False
            try:
                async with join_table(
                    identity, invite, listen_host=args.listen, port=args.port,
                    before_dial=words.dialing(before_dial),
                ) as mesh:  # fmt: skip
                    seated = True
                    watch.cancel()
                    lobby = JoinerLobby(mesh, _print)
                    async with trio.open_nursery() as lines:
                        lines.start_soon(_stdin_lines, send)
                        await lobby.seated(functools.partial(lobby.run, recv))
                        lines.cancel_scope.cancel()
                return 0
            except MeshError as exc:
                if seated:
                    raise
                words.failed(exc, delay)
            await trio.sleep(delay)
            delay = min(delay * 2, RETRY_MAX)


class _OneLine(logging.Formatter):
    """Log records as one line each: a library warning must not print a traceback."""

    def format(self, record: logging.LogRecord) -> str:
        return f"buraco-p2p: {record.levelname.lower()}: {record.getMessage()}"


def _quiet_logging() -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_OneLine())
    root = logging.getLogger("buraco_p2p")
    root.handlers[:] = [handler]
    root.propagate = False
    trio_log = logging.getLogger("trio")
    trio_log.handlers[:] = [handler]
    trio_log.propagate = False


# Signals that end a table as Ctrl-C does: a `kill` and a closed terminal.
ENDING_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


def run_ending_on_signals(main: Callable[..., Awaitable[Any]], *args: Any) -> int:
    """`trio.run(main, *args)`, where SIGTERM and SIGHUP end it as Ctrl-C does: every block
    unwinds (a port mapping is deleted, the log is already on disk) instead of the process
    dying where it stands. They are caught whatever SIGINT's disposition: a launcher that
    starts us with SIGINT ignored (`buraco-p2p host ... &` in a shell script) leaves trio no
    Ctrl-C handler to lend them. A run a signal ended exits with 128 + its number, as the
    shell reports a process the signal killed."""
    got: list[int] = []

    async def guarded() -> Any:
        result: list[Any] = []
        with trio.open_signal_receiver(*ENDING_SIGNALS) as signals:
            async with trio.open_nursery() as nursery:

                async def watch() -> None:
                    async for signum in signals:
                        got.append(signum)
                        nursery.cancel_scope.cancel()
                        return

                nursery.start_soon(watch)
                result.append(await main(*args))
                nursery.cancel_scope.cancel()
        if got:
            return 128 + got[0]
        return result[0]

    try:
        return int(trio.run(guarded))
    except BaseException as exc:
        if got and exit_status(exc) == (EXIT_INTERRUPTED, ""):
            return 128 + got[0]
        raise


def _run(main: Callable[[argparse.Namespace], Any], args: argparse.Namespace) -> int:
    def checked() -> int:
        args.port = check_port(args.port)
        args.listen = check_listen(args.listen)
        if args.port or args.listen:
            # Probed before anything is printed (binding sends nothing): an address that is
            # not this machine's is one line and exit 2, not a failure after "joining as".
            check_can_listen(args.listen, args.port)
        return 0

    code = run_reporting(checked)
    if code:
        return code
    _quiet_logging()
    return run_reporting(lambda: run_ending_on_signals(main, args))


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--nick", help="your nickname (stored with your identity)")
    parser.add_argument(
        "--listen",
        default="",
        help="numeric address to listen on (default: every interface, IPv4 and IPv6)",
    )
    parser.add_argument("--port", default="0", help="TCP port 0..65535 (default 0: any free one)")
    parser.add_argument(
        "--config-dir", help="where your identity is kept (default: the user config dir)"
    )
    parser.add_argument(
        "--lan", action="store_true", help="use mDNS on the local network (multicast)"
    )
    parser.add_argument(
        "--internet",
        action="store_true",
        help="play across the internet: try a port mapping (host) and ask the --stun servers",
    )
    parser.add_argument(
        "--stun",
        action="append",
        metavar="IP:PORT",
        help="a STUN server to learn your public address from (give two for the NAT class)",
    )
    parser.add_argument(
        "--turn",
        action="append",
        metavar="USER:PASSWORD@IP:PORT",
        help="a TURN server to relay through where no other path works (numeric address, "
        "port 3478 by default)",
    )


def register(subparsers: Any) -> None:
    """Add the `host` and `join` commands to the `buraco-p2p` command line."""
    host = subparsers.add_parser("host", help="create a table and wait for the other players")
    _common(host)
    host.add_argument(
        "--auto-approve", action="store_true", help="seat every joiner without asking"
    )
    host.add_argument(
        "--upnp", action="store_true", help="map the port on the router with UPnP (multicast)"
    )
    # The table's seat count; the match layer sets it from the rules (`--players`).
    host.set_defaults(func=lambda args: _run(_host_main, args), seats=4)
    join = subparsers.add_parser("join", help="join a table with an invite code")
    _common(join)
    join.add_argument(
        "code",
        nargs="?",
        help="the invite code from the host (BRC-...), or its short code (BRS-...)",
    )
    join.set_defaults(func=lambda args: _run(_join_main, args))
