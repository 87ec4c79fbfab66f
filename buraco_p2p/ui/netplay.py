"""`host`, `join` and `resume` in the full-screen client: the lobby, then the table, in one app.

`LobbyFeed` is a table feed whose `run()` first opens the mesh (hosting, or joining with
retries while the host cannot be reached) and shows the lobby (`LobbyModel` on the lobby
screen); once every seat is ready it agrees the genesis on that mesh, exactly as the line
lobby's match runner does, and from then on it is a `DriverFeed`: the same application
switches to the table screen, without a second application or a redraw of the terminal.
`ResumeFeed` brings back a table from the data directory and shows it once its log has been
replayed, catching up from the peers on screen. `--internet`, `--upnp` and `--stun` run the
line client's own steps (`host_reach`, `joiner_reach`), reported on the screen (`lobby_reach`),
in the lobby, then in the table's feed: a host whose public address changed mid-match shows
the re-join code there (`codes_to_feed`); a joiner pastes it at the table (`DriverFeed.say`).
The seats marked as bots (the host's own bot peers, or the ones the host's `bots` message
named) are saved with the table when the match starts and marked again on `resume`.

Failures end the application and come back as one line on the terminal it restored
(`run_full_screen`), with the exit codes of the line front end.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import logging
import os
import tempfile
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path

import trio
from prompt_toolkit.input import Input
from prompt_toolkit.output import Output

from buraco_p2p.bots import DEFAULT_LEVEL
from buraco_p2p.net.channel.errors import MeshError
from buraco_p2p.net.channel.identity import Identity, PeerKey, load_or_create_identity
from buraco_p2p.net.mesh.commands import (
    RETRY_FIRST,
    RETRY_MAX,
    JoinerLobby,
    ReachOutput,
    _stun_servers,
    check_can_listen,
    check_listen,
    check_port,
    host_reach,
    joiner_reach,
    run_reporting,
)
from buraco_p2p.net.mesh.lobby import Lobby
from buraco_p2p.net.mesh.mesh import JoinRequest, Mesh, auto_approve
from buraco_p2p.net.mesh.startup import host_table, join_table
from buraco_p2p.net.mesh.wayout import JoinerWords, empty_seats_told
from buraco_p2p.net.reach.invite import Invite
from buraco_p2p.net.reach.shortcode import ShortCode, fetch_invite, is_short_code
from buraco_p2p.play.botmarks import announce_resumed_bots, save_bot_keys
from buraco_p2p.play.botpeer import SEED_ENV, level_args
from buraco_p2p.play.cluster import Cluster
from buraco_p2p.play.node import open_node, start_on_mesh
from buraco_p2p.play.store import StoreError
from buraco_p2p.privatefile import write_private
from buraco_p2p.rules import RuleSet
from buraco_p2p.text.rejoin import host_code_lines
from buraco_p2p.ui.app import TableApp
from buraco_p2p.ui.driver_feed import DriverFeed
from buraco_p2p.ui.feed import TableFeed
from buraco_p2p.ui.lobby_model import LobbyModel
from buraco_p2p.ui.lobby_reach import address_words, asks_reach, host_output, joiner_say
from buraco_p2p.ui.theme import no_color

__all__ = ["LobbyFeed", "ResumeFeed", "codes_to_feed", "invite_path", "run_full_screen"]


def invite_path(root: Path, table_id: bytes) -> Path:
    """Where the host's invite code is written, to copy from a file."""
    return root / "invites" / f"{table_id.hex()}.txt"


class _ToScreen(logging.Handler):
    """Log records into the lobby's notices, then the table's feed: stderr would scribble
    over the full screen."""

    def __init__(self, feed: TableFeed, model: LobbyModel | None) -> None:
        super().__init__(logging.WARNING)
        self.feed = feed
        self.model = model

    def emit(self, record: logging.LogRecord) -> None:
        if threading.current_thread() is not threading.main_thread():
            return  # the screen belongs to the main thread's loops; a helper thread's is lost
        text = f"{record.levelname.lower()}: {record.getMessage()}"
        with contextlib.suppress(RuntimeError):  # outside the trio run: nowhere to show it
            if self.model is not None and self.model.active:
                self.model.say(text)
            elif isinstance(self.feed, DriverFeed):
                self.feed.line(None, text)


class LobbyFeed(DriverFeed):
    """Host (`rules` given) or join (`invite` or `code` given) a table, lobby first."""

    def __init__(
        self,
        identity: Identity,
        root: Path,
        *,
        rules: RuleSet | None = None,
        preset: str = "classic",
        overrides: tuple[str, ...] = (),
        code: str = "",
        bots: int = 0,
        auto: bool = False,
        listen: str = "127.0.0.1",
        port: int = 0,
        lan: bool = False,
        reach: argparse.Namespace | None = None,
    ) -> None:
        super().__init__(rules, "network table")
        self.identity = identity
        self.root = root
        self.log_root = root
        self.code = code
        self.n_bots = bots
        self.auto = auto
        self.listen = listen
        self.port = port
        self.lan = lan
        # the command line's --internet/--upnp/--stun (and whatever `host_reach` takes), as
        # parsed: handed on whole, as the line client hands them
        self.reach = reach
        self.model = LobbyModel(
            identity.nickname, identity.public.fingerprint(), rules=rules, preset=preset,
            overrides=overrides,
        )  # fmt: skip
        self.model.reaching = asks_reach(reach)
        self.table_id: bytes | None = None

    async def run(self) -> None:
        if self.model.is_host:
            await self._host()
        else:
            await self._join()

    # -- host -----------------------------------------------------------------------------

    async def _host(self) -> None:
        rules = self.model.rules
        assert rules is not None
        box: list[Lobby] = []
        seeds = [os.urandom(32) for _ in range(self.n_bots)]
        bot_keys = frozenset(Identity.from_seed(s, "bot").public.raw for s in seeds)

        async def approve(request: JoinRequest) -> bool:
            if request.key.raw in bot_keys or self.auto:
                return await auto_approve(request)
            return await box[0].approve(request)

        self.model.status = "opening the table"
        async with host_table(
            self.identity, listen_host=self.listen, port=self.port, approve=approve,
            seats=rules.players,
        ) as mesh, contextlib.AsyncExitStack() as stack:  # fmt: skip
            lobby = Lobby(mesh, self.model.out)
            lobby.bots = bot_keys  # we make them, so we know them, and tell the table
            box.append(lobby)
            await self._reach(stack, mesh)
            self._show_invite(mesh)
            self._reach_note(mesh)
            self.model.attach(lobby)
            lobby.on_seats = self.model.announce_rules
            if self.lan:
                await self._announce(stack, mesh, lobby)
            if seeds:
                self._start_bots(stack, mesh, rules, seeds)
            self.model.say("when every seat is taken, everyone presses r (ready)")
            # after the first minute: the seats still empty, and what we know of why
            async with empty_seats_told(mesh, self.model.out):
                await self._lobby_then_match(mesh, lobby)

    async def _reach(self, stack: contextlib.AsyncExitStack, mesh: Mesh) -> None:
        """The host's `--internet`/`--upnp`/`--stun` (`host_reach`, as the line client runs
        it) for the table's life, reported on the lobby screen; a pasted reply code is
        answered as the line client answers it (`answer_reply_code`)."""
        from buraco_p2p.net.mesh.internet import answer_reply_code

        port = mesh.advertised[0].port if mesh.advertised else self.port
        model = self.model

        def reply(text: str) -> Callable[[], Awaitable[None]]:
            return lambda: answer_reply_code(mesh, port, text, model.out)

        model.on_reply = reply
        if not self.model.reaching:
            return
        model.status = "asking for a way in from outside your network"
        model.on_change()
        table = functools.partial(self.line, None)
        await stack.enter_async_context(
            host_reach(mesh, port, self.reach or argparse.Namespace(),
                       host_output(model, self._show_invite, table))
        )  # fmt: skip
        codes_to_feed(mesh, self, model)

    def _reach_note(self, mesh: Mesh) -> None:
        """As the line client says under its invite: a word if every address in it is inside
        this network (players elsewhere cannot reach us)."""
        from buraco_p2p.net.mesh.wayout import host_reach_note

        note = host_reach_note(mesh.invite)
        if note is not None:
            self.model.out(note)

    def _show_invite(self, mesh: Mesh) -> None:
        invite = mesh.invite
        self.table_id = invite.table_id
        self.model.addresses = address_words(invite)
        self.model.invite = invite.to_text()
        short = ShortCode.for_invite(invite)
        self.model.short = short.to_text() if short is not None else ""
        path = invite_path(self.root, invite.table_id)
        try:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            write_private(path, (self.model.invite + "\n").encode())
            self.model.invite_file = path
        except OSError as exc:
            self.model.say(f"the invite could not be written to {path}: {exc.strerror or exc}")

    async def _announce(self, stack: contextlib.AsyncExitStack, mesh: Mesh, lobby: Lobby) -> None:
        from buraco_p2p.net.reach.discovery import announce_table

        port = mesh.advertised[0].port if mesh.advertised else self.port
        seats = mesh.roster.seats if mesh.roster is not None else 4
        ann = await stack.enter_async_context(
            announce_table(mesh.invite, self.identity.nickname, port, seats=seats)
        )

        async def on_seats(n: int) -> None:
            await self.model.announce_rules(n)
            await ann.update(n)

        lobby.on_seats = on_seats
        self.model.say("announced on the local network")

    def _start_bots(
        self, stack: contextlib.AsyncExitStack, mesh: Mesh, rules: RuleSet, seeds: list[bytes]
    ) -> None:
        self.root.mkdir(parents=True, exist_ok=True, mode=0o700)
        bot_root = Path(tempfile.mkdtemp(prefix="bots-", dir=self.root))
        level = getattr(self.reach, "bot_level", None)
        self.bot_level = level or DEFAULT_LEVEL
        cluster = Cluster(rules.players, bot_root, None, humans=[0],
                          peer_args=level_args(level, getattr(self.reach, "bot_think", None)))
        cluster.invite = mesh.invite.to_text()
        for k, seed in enumerate(seeds, 1):
            cluster.env[k] = {SEED_ENV: seed.hex()}
        stack.enter_context(cluster)
        for k in range(1, len(seeds) + 1):
            cluster.join(k)
        self.model.say(f"{len(seeds)} bot peers are joining")

    # -- join -----------------------------------------------------------------------------

    async def _join(self) -> None:
        model = self.model
        if is_short_code(self.code):
            code = ShortCode.from_text(self.code)
            model.status = f"asking the host at {code.endpoint} for the full invite"
            model.on_change()
            invite = await fetch_invite(code, self.identity)
            model.say("short code accepted: compare the host's fingerprint by voice")
        else:
            invite = Invite.from_text(self.code)
        model.host_fingerprint = PeerKey(invite.host_key).fingerprint()
        self.table_id = invite.table_id
        model.status = "waiting for the host to seat you"
        # the same steps as the line client's (`joiner_reach`), said on the screen
        reach = self.reach or argparse.Namespace(internet=False, stun=None)
        words = JoinerWords(invite, model.out)
        before_dial = joiner_reach(reach, invite, joiner_say(model), words)
        model.say(f"asked the host ({model.host_fingerprint}) for a seat; waiting for its answer")

        def asked() -> None:  # the host has the request: nothing to advise, a person decides
            model.status = "the host has your request: waiting for its answer"
            model.on_change()

        words.on_asked = asked
        dial = words.dialing(before_dial)
        async with words.watching() as watch:  # after the first minute: why, what would help
            delay = RETRY_FIRST
            while True:
                try:
                    async with join_table(
                        self.identity, invite, listen_host=self.listen, port=self.port,
                        before_dial=dial,
                    ) as mesh:  # fmt: skip
                        watch.cancel()
                        lobby = JoinerLobby(mesh, model.out)
                        model.attach(lobby)
                        model.say("seated: press r when you are ready")
                        await self._lobby_then_match(mesh, lobby)
                    return
                except MeshError as exc:
                    if model.lobby is not None:
                        raise
                    words.failed(exc, delay)
                await trio.sleep(delay)
                delay = min(delay * 2, RETRY_MAX)

    # -- both -----------------------------------------------------------------------------

    async def _lobby_then_match(self, mesh: Mesh, lobby: Lobby) -> None:
        if self.model.is_host:
            await self.model.announce_rules()
        if isinstance(lobby, JoinerLobby):
            await lobby.seated(lobby.until_ready)  # a kick ends the lobby: `SeatLost`
        else:
            await lobby.until_ready()
        model = self.model
        model.say("everyone is ready: the match starts")
        rules = model.rules if model.is_host else None
        self.rules = rules or self.rules
        model.active = False
        model.on_change()
        self.bot_keys = lobby.bots  # ours, or what the host's `bots` named
        async with start_on_mesh(
            mesh, self.identity, self.root, rules=rules, held=lobby.backlog,
            waiting=self.waiting_for,
        ) as driver:  # fmt: skip
            save_bot_keys(self.root, mesh.table_id, self.bot_keys)
            self.attach(driver)
            tid = mesh.table_id.hex()
            self.line(None, f"table {tid}: after a crash, `buraco-p2p resume` lists it")
            await self.follow()


class ResumeFeed(DriverFeed):
    """A table of the data directory, brought back and caught up on screen."""

    def __init__(
        self, identity: Identity, root: Path, table_id: bytes,
        bot_keys: frozenset[bytes] = frozenset(), reach: argparse.Namespace | None = None,
    ) -> None:  # fmt: skip
        super().__init__(None, "network table (resumed)")
        self.identity = identity
        self.root = root
        self.log_root = root
        self.table_id = table_id
        self.bot_keys = bot_keys  # saved with the table (`play.botmarks`)
        self.reach = reach  # `resume --internet/--stun`, as parsed
        self.line(None, f"resuming table {table_id.hex()}: replaying the log, then catching up")

    async def run(self) -> None:
        async with open_node(self.identity, self.root, resume=self.table_id) as driver:
            await announce_resumed_bots(driver, self.bot_keys)
            self.attach(driver)
            self.line(None, f"log replayed ({len(driver.peer.log)} entries); catching up")
            async with self._reach_again(driver.mesh):
                await self.follow()

    @contextlib.asynccontextmanager
    async def _reach_again(self, mesh: Mesh) -> AsyncIterator[None]:
        """`resume --internet/--stun` on the host, as the line client does it: a router that
        rebooted may have dropped the mapping and changed the public address, so ask again
        (`host_reach`), advertise what comes, and write the invite with it for a player
        whose link does not come back (`join` with it resumes their saved table)."""
        if not asks_reach(self.reach):
            yield
            return
        if not mesh.is_host:
            self.line(None, "--internet and --stun on resume are for the host; a joiner needs "
                      "neither")  # fmt: skip
            yield
            return
        args = argparse.Namespace(**{"upnp": False, **vars(self.reach or argparse.Namespace())})
        port = mesh.advertised[0].port if mesh.advertised else 0

        def say(text: str) -> None:
            self.line(None, text.removeprefix("* "))

        def invite(m: Mesh) -> None:
            path = invite_path(self.root, m.invite.table_id)
            try:
                path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
                write_private(path, (m.invite.to_text() + "\n").encode())
            except OSError as exc:
                say(f"the invite could not be written to {path}: {exc.strerror or exc}")
                return
            say(f"a player whose link does not come back joins again with the invite in {path}")

        out = ReachOutput(say=say, invite=invite, mapping=lambda text: None)
        async with host_reach(mesh, port, args, out):
            codes_to_feed(mesh, self)
            invite(mesh)
            yield


def codes_to_feed(mesh: Mesh, feed: DriverFeed, lobby: LobbyModel | None = None) -> None:
    """Once `host_reach` watches our public address (it set `moves.announce`), a re-join
    code goes into the table's feed on a line of its own, under what it is for
    (`DriverFeed.host_code`): the line client's two printed lines would be cut at the
    screen's width, and the code must stay whole to be copied. While `lobby` is on screen
    (the address can change before the match), the same two lines go into its notices."""
    if mesh.moves.announce is None:
        return

    def announce(code: str) -> None:
        if lobby is not None and lobby.active:
            first, alone = host_code_lines(code)
            lobby.say(first)
            lobby.out(alone)
        else:
            feed.host_code(code)

    mesh.moves.announce = announce


@contextlib.contextmanager
def _logging_to(feed: TableFeed, model: LobbyModel | None) -> Iterator[None]:
    names = ("buraco_p2p", "trio")
    saved = [(logging.getLogger(n), logging.getLogger(n).handlers[:],
              logging.getLogger(n).propagate) for n in names]  # fmt: skip
    handler = _ToScreen(feed, model)
    for lg, _, _ in saved:
        lg.handlers[:] = [handler]
        lg.propagate = False
    try:
        yield
    finally:
        for lg, handlers, propagate in saved:
            lg.handlers[:] = handlers
            lg.propagate = propagate


def run_full_screen(
    feed: TableFeed,
    *,
    ascii: bool = False,
    lobby: LobbyModel | None = None,
    prog: str = "buraco-p2p",
    input: Input | None = None,
    output: Output | None = None,
) -> int:
    """Run the client for `feed` until the player quits; failures as one line (on the
    terminal the application has restored) and the line front end's exit code. `input` and
    `output` replace the terminal (tests)."""
    app = TableApp(feed, ascii=ascii, colour=not no_color(), lobby=lobby, input=input,
                   output=output)  # fmt: skip

    def main() -> int:
        with _logging_to(feed, lobby):
            asyncio.run(app.run())
        return 0

    return run_reporting(main, prog, data_errors=(StoreError,))


def check_address(args: argparse.Namespace) -> None:
    """The --listen and --port checks of the line front end, before the screen opens."""
    args.port = check_port(args.port)
    args.listen = check_listen(args.listen)
    # Probed even without a port (any free one): an address not this machine's is one line
    # and exit 2 here, not a failure after the screen has opened.
    check_can_listen(args.listen, args.port or 0)
    _stun_servers(args)  # a --stun that cannot work, likewise


def identity_of(args: argparse.Namespace) -> Identity:
    config = Path(args.config_dir) if getattr(args, "config_dir", None) else None
    return load_or_create_identity(config, getattr(args, "nick", None))
