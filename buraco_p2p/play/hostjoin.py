"""`host` and `join` go on to the match: rules for the host, bots for empty seats, resume.

The lobby (`net.lobby`) fills the seats; once every seated player has typed `/ready` it hands
the mesh to the runner installed here, which agrees the genesis, opens the table directory
and plays the match in line mode. `host --bots N` starts N `bot-peer` processes that join
with the invite (the host seats them without asking: it made their identities); `join CODE`
for a table already in the data directory resumes it instead of asking for a seat again.
The seats marked as bots (the host's own, or what its `bots` message named) are saved with
the table when the match starts (`play.botmarks`), so `resume` marks them again; a resumed
host announces them to the table again.

On a terminal, `host`, `join` and `resume` open the full-screen client instead (`ui.netplay`):
the lobby screen, then the table in the same application, `--internet`, `--upnp` and `--stun`
included (the port mapping's state, the public address and pasted reply codes are on the lobby
screen). `--line` keeps the line lobby, and so does `join --lan` (picking a table by number).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import os
import shutil
import sys
import tempfile
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, Protocol

import trio

from buraco_p2p.bots.selfplay import (
    UsageError,
    add_level_options,
    add_minutes_option,
    check_think,
    resolve_rules,
)
from buraco_p2p.net.channel.identity import Identity, PeerKey, load_or_create_identity
from buraco_p2p.net.mesh import lobby as lobby_mod
from buraco_p2p.net.mesh.commands import (
    _route_reply_codes,
    _run,
    _stdin_lines,
    _stun_servers,
    host_reach,
    run_ending_on_signals,
    run_reporting,
    show_invite,
    turn_servers,
)
from buraco_p2p.net.mesh.lobby import Lobby
from buraco_p2p.net.mesh.mesh import JoinRequest, Mesh
from buraco_p2p.net.mesh.startup import host_table
from buraco_p2p.net.reach.invite import MAX_ADDRESSES, Invite, InviteError
from buraco_p2p.play.botmarks import announce_resumed_bots, load_bot_keys, save_bot_keys
from buraco_p2p.play.botpeer import SEED_ENV, level_args
from buraco_p2p.play.cluster import Cluster
from buraco_p2p.play.console import console
from buraco_p2p.play.local import (
    DamagedTable,
    ResumeError,
    _run_console,
    finished_lines,
    list_tables,
    resume_failed,
    resume_target,
)
from buraco_p2p.play.matchlog import program
from buraco_p2p.play.node import open_node, start_on_mesh
from buraco_p2p.play.options import add_hands_option, hands_rule
from buraco_p2p.play.selves import NoSelf, claim_for
from buraco_p2p.play.store import StoreError, TableStore
from buraco_p2p.play.summary import load_summary
from buraco_p2p.rules import RuleSet

__all__ = ["forget_bots", "register", "restart_bots"]


class FullScreen(Protocol):
    """The full-screen client (`ui.netplay`) as the command layer (cli.py) hands it over: the
    play layer never imports the UI. Each runs to the end and returns the exit code."""

    def host(self, args: argparse.Namespace, rules: RuleSet, root: Path) -> int: ...

    def join(self, args: argparse.Namespace, root: Path) -> int: ...

    def resume(
        self, args: argparse.Namespace, root: Path, table: bytes, bots: frozenset[bytes]
    ) -> int: ...


def _say(text: str) -> None:
    print(text, flush=True)


def _runner(rules: RuleSet | None, root: Path) -> lobby_mod.MatchRunner:
    async def run(
        mesh: Mesh,
        lines: trio.MemoryReceiveChannel[str],
        held: list[tuple[PeerKey, Any]],
        out: Callable[[str], None],
        bot_keys: frozenset[bytes],
    ) -> int:
        async with start_on_mesh(
            mesh, mesh.identity, root, rules=rules if mesh.is_host else None, held=held
        ) as driver:
            save_bot_keys(root, mesh.table_id, bot_keys)  # for `resume` (play.botmarks)
            out(f"table {mesh.table_id.hex()} (after a crash: buraco-p2p resume "
                f"{mesh.table_id.hex()}, or join with the same code)")  # fmt: skip
            closed = await console(driver, lines, out, bot_keys=bot_keys)
            said = finished_lines(driver, root) if closed else [
                f"left the table; come back with: {program()} resume {mesh.table_id.hex()}"]
        for line in said:
            out(line)
        return 0

    return run


def _terminal() -> bool:
    return sys.stdin.isatty() and sys.stdout.isatty()


def _full_screen(args: argparse.Namespace) -> bool:
    """Whether this `host` or `join` runs in the full-screen client."""
    return _terminal() and not args.line


def _screen_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--line", action="store_true", help="the line interface, not full screen")
    parser.add_argument("--ascii", action="store_true", help="letters for suits (S H D C)")


def register(subparsers: Any, screens: FullScreen | None = None) -> None:
    """Add the match options to `host`, `join` and `resume` (registered before us); on a
    terminal they open `screens`, the full-screen client, when given one."""
    host: argparse.ArgumentParser = subparsers.choices["host"]
    host.description = (
        "Create a table and wait for the other players: the lobby shows the invite code to "
        "share (and a short code to read aloud), every seat with its fingerprint, and the "
        "rules; the host approves each joiner, and the match starts when every seat is "
        "ready. Full screen on a terminal (--line for typed commands). --bots N fills seats "
        "with bot peers."
    )
    host.add_argument("--rules", default="us", metavar="PRESET",
                      help="rule preset (default us, as play)")  # fmt: skip
    host.add_argument("--rule", action="append", default=[], metavar="KEY=VALUE")
    host.add_argument("--bots", type=int, default=0, metavar="N", help="fill N seats with bots")
    add_level_options(host, "the level of the bots --bots starts")
    host.add_argument(
        "--players", type=int, metavar="N", help="seats: 2, 3, 4 or 6 (as --rule players=N)"
    )
    add_minutes_option(host)
    add_hands_option(host)
    host.add_argument("--data-dir", metavar="DIR", help="where tables are kept")
    _screen_options(host)
    host_func: Callable[[argparse.Namespace], int] = host.get_default("func")

    def run_host(args: argparse.Namespace) -> int:
        try:
            rules = resolve_rules(args.rules, hands_rule(args), args.players, args.minutes)
        except UsageError as exc:
            sys.stderr.write(f"buraco-p2p host: error: {exc}\n")
            return 2
        args.seats = rules.players
        try:
            check_think(args.bot_think)
        except UsageError as exc:
            sys.stderr.write(f"buraco-p2p host: error: {exc}\n")
            return 2
        if not 0 <= args.bots < rules.players:
            sys.stderr.write(f"buraco-p2p host: error: --bots must be 0..{rules.players - 1}\n")
            return 2
        if (failed := _claimed(args, "host")) is not None:
            return failed
        root = Path(args.data_dir)
        if screens is not None and _full_screen(args):
            return screens.host(args, rules, root)
        lobby_mod.set_match_runner(_runner(rules, root))
        if args.bots:
            return _run(lambda a: _host_with_bots(a, rules, root), args)
        return host_func(args)

    host.set_defaults(func=run_host)

    join: argparse.ArgumentParser = subparsers.choices["join"]
    join.description = (
        "Join a table with the invite code the host shared (BRC-...) or its short code "
        "(BRS-...): the host is asked for a seat, then the lobby shows the table until every "
        "seat is ready. Compare the host's fingerprint by voice. A code of a table kept here "
        "resumes it. Full screen on a terminal (--line for typed commands)."
    )
    join.add_argument("--data-dir", metavar="DIR", help="where tables are kept")
    _screen_options(join)
    join_func: Callable[[argparse.Namespace], int] = join.get_default("func")

    def run_join(args: argparse.Namespace) -> int:
        if (failed := _claimed(args, "join")) is not None:
            return failed
        root = Path(args.data_dir)
        if args.code:
            with contextlib.suppress(InviteError):
                tid = Invite.from_text(args.code).table_id.hex()
                if (root / "tables" / tid / "log").exists():
                    _say(f"this table is in {root}: resuming it")
                    _adopt_addresses(root, Invite.from_text(args.code))
                    ns = argparse.Namespace(table=tid, data_dir=str(root),
                                            config_dir=args.config_dir, line=args.line,
                                            ascii=args.ascii, self_note=args.self_note,
                                            claimed=True)  # fmt: skip
                    return run_resume(ns)
        if screens is not None and args.code and not args.lan and _full_screen(args):
            return screens.join(args, root)
        lobby_mod.set_match_runner(_runner(None, root))
        return join_func(args)

    join.set_defaults(func=run_join)

    resume: argparse.ArgumentParser = subparsers.choices["resume"]
    _screen_options(resume)
    resume.add_argument(
        "--internet", action="store_true",
        help="host: ask the router for a port mapping again (its address may have changed)",
    )  # fmt: skip
    resume.add_argument(
        "--stun", action="append", metavar="IP:PORT",
        help="host: learn the public address again from this STUN server",
    )  # fmt: skip
    resume.add_argument(
        "--turn", action="append", metavar="USER:PASSWORD@IP:PORT",
        help="host: a relayed address again from this TURN server",
    )  # fmt: skip

    def run_resume(args: argparse.Namespace) -> int:
        if not args.table:
            return list_tables(args)
        if not _terminal() or args.line:
            return _resume_line(args)
        return _resume_screen(args, screens)

    resume.set_defaults(func=run_resume)


def _claimed(args: argparse.Namespace, prog: str, table: bytes | None = None) -> int | None:
    """Claim this process's self (`play.selves`) into `args`; the exit code if none is
    free (said in one line), else None. A line client says which self it is at once."""
    try:
        claim_for(args, table)
    except NoSelf as exc:
        sys.stderr.write(f"buraco-p2p {prog}: error: {exc}\n")
        return 4
    if args.self_note and not _full_screen(args):
        _say(f"* {args.self_note}")
    return None


def _resume_target(args: argparse.Namespace) -> tuple[Path, bytes, frozenset[bytes]]:
    """`resume_target`, and the bot marks saved with the table: a damaged marks file is a
    damaged table (`DamagedTable`), named before anything starts. The self that keeps the
    table is claimed first (`play.selves`): a table kept only by a running client's self is
    open in another process."""
    if args.table and not getattr(args, "claimed", False):
        try:
            table = bytes.fromhex(args.table)
        except ValueError:
            raise ResumeError("TABLE is a table id in hex") from None
        try:
            claim_for(args, table)
        except NoSelf as exc:
            raise DamagedTable(str(exc)) from None
        args.claimed = True
    root, table = resume_target(args)
    try:
        return root, table, load_bot_keys(root, table)
    except StoreError as exc:
        raise DamagedTable(f"table {table.hex()} in {root}: {exc}") from None


def _resume_screen(args: argparse.Namespace, screens: FullScreen | None = None) -> int:
    """`resume` in the full-screen client `screens` (the line client without one); a table
    that cannot be resumed is named before either starts."""
    try:
        root, table, bots = _resume_target(args)
    except ResumeError as exc:
        return resume_failed(exc)
    if screens is None:
        return _resume_line(args)
    try:
        with restart_bots(root, table) or contextlib.nullcontext():
            return screens.resume(args, root, table, bots)
    finally:
        forget_bots(root, table)


def _resume_line(args: argparse.Namespace) -> int:
    """`resume` in line mode, the saved bot marks on the seats they name."""
    try:
        root, table, bots = _resume_target(args)
    except ResumeError as exc:
        return resume_failed(exc)
    config = Path(args.config_dir) if args.config_dir else None
    me = load_or_create_identity(config, None)

    async def main() -> int:
        async with open_node(me, root, resume=table) as driver:
            await announce_resumed_bots(driver, bots)
            async with _reach_again(driver.mesh, args):
                return await _run_console(driver, bot_keys=bots, root=root,
                                          options=getattr(args, "dir_options", ""))  # fmt: skip

    try:
        with restart_bots(root, table) or contextlib.nullcontext():
            return run_reporting(
                lambda: run_ending_on_signals(main), "buraco-p2p resume", (StoreError,)
            )
    finally:
        forget_bots(root, table)


@contextlib.asynccontextmanager
async def _reach_again(mesh: Mesh, args: argparse.Namespace) -> AsyncIterator[None]:
    """`resume --internet/--stun` on the host: a router that rebooted may have dropped the
    mapping and changed the public address, so ask again, advertise what comes (the joiners
    still linked get it in the roster) and print the invite with it: a joiner whose link does
    not come back runs `join` with that code, which resumes its saved table at the new
    addresses (`_adopt_addresses`)."""
    internet = bool(getattr(args, "internet", False))
    stun = getattr(args, "stun", None)
    turn = getattr(args, "turn", None)
    if not (internet or stun or turn):
        yield
        return
    if not mesh.is_host:
        _say("* --internet, --stun and --turn on resume are for the host; a joiner needs none")
        yield
        return
    _stun_servers(args)
    turn_servers(args)
    ns = argparse.Namespace(internet=internet, upnp=False, stun=stun, turn=turn)
    port = mesh.advertised[0].port if mesh.advertised else 0
    async with host_reach(mesh, port, ns):
        _say("* a player whose link does not come back joins again with this code (the saved "
             "table is resumed, at these addresses):")  # fmt: skip
        show_invite(mesh)
        yield


def _adopt_addresses(root: Path, code: Invite) -> None:
    """`join CODE` for a table saved here: the code may come from a host that resumed at new
    addresses (its router renumbered). The saved invite takes the code's addresses first
    (then its own), if the code names the same table, host and room secret: the handshake
    pins the host's key whatever address answers, so an address cannot mislead us."""
    store = TableStore.for_table(code.table_id, root)
    try:
        store.lock()
        meta = store.load_meta()
        saved = Invite.from_bytes(meta.invite)
        if (saved.host_key, saved.room_secret) != (code.host_key, code.room_secret):
            return
        pairs = dict(zip(code.addresses, code.kinds, strict=True))
        for ep, kind in zip(saved.addresses, saved.kinds, strict=True):
            pairs.setdefault(ep, kind)
        kept = list(pairs.items())[:MAX_ADDRESSES]
        if [ep for ep, _ in kept] == list(saved.addresses):
            return
        merged = dataclasses.replace(
            saved, addresses=tuple(ep for ep, _ in kept), kinds=tuple(k for _, k in kept),
            nat_class=code.nat_class,
        )  # fmt: skip
        store.save_meta(dataclasses.replace(meta, invite=merged.to_bytes()))
        _say(f"* the host's addresses from this code are saved with the table: "
             f"{', '.join(str(ep) for ep in code.addresses)}")  # fmt: skip
    except (StoreError, InviteError) as exc:
        _say(f"* the table's saved invite is kept as it was: {exc}")
    finally:
        store.close()


def forget_bots(root: Path, table: bytes) -> None:
    """A finished table's bot peers are not needed again: their directories (`bots-*`, each
    bot's identity and copy of the table) go, so a data directory does not fill up with one
    per match. A table that is not over keeps them (`restart_bots` needs them)."""
    summary = load_summary(TableStore.for_table(table, root).path)
    if summary is None or not summary.over:
        return
    for d in root.glob("bots-*"):
        if any(d.glob(f"peer-*/tables/{table.hex()}")):
            shutil.rmtree(d, ignore_errors=True)


def restart_bots(root: Path, table: bytes) -> Cluster | None:
    """Start again the bot peers `host --bots` started for `table` (None if it started
    none): each from its own data directory (`bot-peer --resume`), so with the identity it
    had. They are the host's children and end with it, also when it is killed; a resumed
    host that did not start them again would leave their seats empty for good. The caller
    ends them (the cluster is a context manager) when it leaves the table."""
    found = sorted(root.glob(f"bots-*/peer-*/tables/{table.hex()}/secret"))
    if not found:
        return None
    bot_root = found[0].parents[3]
    names = [s.parents[2].name.removeprefix("peer-") for s in found if s.parents[3] == bot_root]
    seats = [int(k) for k in names if k.isdigit()]
    cluster = Cluster(max(seats) + 1, bot_root, None, humans=[0])
    cluster.table = table.hex()
    for k in seats:
        cluster.resume(k)
    return cluster


async def _host_with_bots(args: argparse.Namespace, rules: RuleSet, root: Path) -> int:
    """`host --bots N`: the bots join over loopback; `--internet`, `--upnp` and `--stun` work
    as without bots (the mapping, the public address, pasted reply codes)."""
    from buraco_p2p.net.mesh.internet import answer_reply_code
    from buraco_p2p.net.mesh.wayout import PastedCode, tell_empty_seats

    _stun_servers(args)  # a --stun or --turn that cannot work fails before any socket opens
    turn_servers(args)
    config = Path(args.config_dir) if args.config_dir else None
    identity = load_or_create_identity(config, args.nick)
    seeds = [os.urandom(32) for _ in range(args.bots)]
    bot_keys = frozenset(Identity.from_seed(s, "bot").public.raw for s in seeds)
    lobby_mod.set_match_runner(_runner(rules, root))
    box: list[Lobby] = []

    async def approve(request: JoinRequest) -> bool:
        if request.key.raw in bot_keys:
            await trio.lowlevel.checkpoint()
            return True
        if args.auto_approve:
            return True
        return await box[0].approve(request)

    root.mkdir(parents=True, exist_ok=True, mode=0o700)
    bot_root = Path(tempfile.mkdtemp(prefix="bots-", dir=root))
    cluster = Cluster(rules.players, bot_root, None, humans=[0],
                      peer_args=level_args(args.bot_level, args.bot_think))  # fmt: skip
    for k, seed in enumerate(seeds, 1):
        cluster.env[k] = {SEED_ENV: seed.hex()}
    with cluster:
        async with host_table(
            identity, listen_host=args.listen, port=int(args.port), approve=approve,
            seats=rules.players,
        ) as mesh:
            lobby = Lobby(mesh, _say)
            lobby.bots = bot_keys  # we made them: marked, and announced to the table
            box.append(lobby)
            port = mesh.advertised[0].port if mesh.advertised else int(args.port)
            async with host_reach(mesh, port, args):
                _say(f"table created; you are {identity.nickname} "
                     f"({identity.public.fingerprint()})")  # fmt: skip
                show_invite(mesh)
                cluster.invite = mesh.invite.to_text()
                for k in range(1, args.bots + 1):
                    cluster.join(k)
                _say(f"* {args.bots} bots are joining; type /ready when every seat is taken")
                send, recv = trio.open_memory_channel[str](16)
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(_stdin_lines, send)
                    lines, lobby_recv = trio.open_memory_channel[str](16)

                    pasted: list[PastedCode] = []

                    async def reply(text: str) -> None:
                        await answer_reply_code(mesh, port, text, _say, pasted=pasted)

                    nursery.start_soon(_route_reply_codes, recv, lines, nursery, reply)
                    nursery.start_soon(tell_empty_seats, mesh, _say, pasted)
                    code = await lobby.run(lobby_recv)
                    nursery.cancel_scope.cancel()
    return code
