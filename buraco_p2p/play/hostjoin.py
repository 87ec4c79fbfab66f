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
the lobby screen, then the table in the same application. `--line` keeps the line lobby, and
so do the switches whose exchanges the line front end alone carries (`--internet`, `--upnp`,
`--stun`: port mappings and pasted reply codes; `join --lan`: picking a table by number).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import trio

from buraco_p2p.bots.selfplay import UsageError, add_minutes_option, resolve_rules
from buraco_p2p.net import lobby as lobby_mod
from buraco_p2p.net.commands import _run, _stdin_lines, run_reporting
from buraco_p2p.net.identity import Identity, PeerKey, load_or_create_identity
from buraco_p2p.net.invite import Invite, InviteError
from buraco_p2p.net.lobby import Lobby
from buraco_p2p.net.mesh import JoinRequest, Mesh
from buraco_p2p.net.startup import host_table
from buraco_p2p.play.botmarks import announce_resumed_bots, load_bot_keys, save_bot_keys
from buraco_p2p.play.botpeer import SEED_ENV
from buraco_p2p.play.cluster import Cluster
from buraco_p2p.play.console import console
from buraco_p2p.play.local import (
    DamagedTable,
    ResumeError,
    _run_console,
    resume_failed,
    resume_target,
)
from buraco_p2p.play.node import open_node, start_on_mesh
from buraco_p2p.play.store import StoreError, default_data_dir
from buraco_p2p.rules import RuleSet

__all__ = ["register", "restart_bots"]


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
        out("the match is over" if closed else "left the table; resume returns to it")
        return 0

    return run


def _terminal() -> bool:
    return sys.stdin.isatty() and sys.stdout.isatty()


def _full_screen(args: argparse.Namespace) -> bool:
    """Whether this `host` or `join` runs in the full-screen client."""
    line_only = (getattr(args, "internet", False) or getattr(args, "upnp", False)
                 or getattr(args, "stun", None))  # fmt: skip
    return _terminal() and not args.line and not line_only


def _screen_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--line", action="store_true", help="the line interface, not full screen")
    parser.add_argument("--ascii", action="store_true", help="letters for suits (S H D C)")


def register(subparsers: Any) -> None:
    """Add the match options to `host`, `join` and `resume` (registered before us)."""
    host: argparse.ArgumentParser = subparsers.choices["host"]
    host.add_argument("--rules", default="classic", metavar="PRESET", help="rule preset")
    host.add_argument("--rule", action="append", default=[], metavar="KEY=VALUE")
    host.add_argument("--bots", type=int, default=0, metavar="N", help="fill N seats with bots")
    host.add_argument(
        "--players", type=int, metavar="N", help="seats: 2, 3, 4 or 6 (as --rule players=N)"
    )
    add_minutes_option(host)
    host.add_argument("--data-dir", metavar="DIR", help="where tables are kept")
    _screen_options(host)
    host_func: Callable[[argparse.Namespace], int] = host.get_default("func")

    def run_host(args: argparse.Namespace) -> int:
        try:
            rules = resolve_rules(args.rules, args.rule, args.players, args.minutes)
        except UsageError as exc:
            sys.stderr.write(f"buraco-p2p host: error: {exc}\n")
            return 2
        args.seats = rules.players
        if not 0 <= args.bots < rules.players:
            sys.stderr.write(f"buraco-p2p host: error: --bots must be 0..{rules.players - 1}\n")
            return 2
        root = Path(args.data_dir) if args.data_dir else default_data_dir()
        if _full_screen(args):
            return _host_screen(args, rules, root)
        lobby_mod.set_match_runner(_runner(rules, root))
        if args.bots:
            return _run(lambda a: _host_with_bots(a, rules, root), args)
        return host_func(args)

    host.set_defaults(func=run_host)

    join: argparse.ArgumentParser = subparsers.choices["join"]
    join.add_argument("--data-dir", metavar="DIR", help="where tables are kept")
    _screen_options(join)
    join_func: Callable[[argparse.Namespace], int] = join.get_default("func")

    def run_join(args: argparse.Namespace) -> int:
        root = Path(args.data_dir) if args.data_dir else default_data_dir()
        if args.code:
            with contextlib.suppress(InviteError):
                tid = Invite.from_text(args.code).table_id.hex()
                if (root / "tables" / tid / "log").exists():
                    _say(f"this table is in {root}: resuming it")
                    ns = argparse.Namespace(table=tid, data_dir=str(root),
                                            config_dir=args.config_dir, line=args.line,
                                            ascii=args.ascii)  # fmt: skip
                    return run_resume(ns)
        if args.code and not args.lan and _full_screen(args):
            return _join_screen(args, root)
        lobby_mod.set_match_runner(_runner(None, root))
        return join_func(args)

    join.set_defaults(func=run_join)

    resume: argparse.ArgumentParser = subparsers.choices["resume"]
    _screen_options(resume)

    def run_resume(args: argparse.Namespace) -> int:
        if not _terminal() or args.line:
            return _resume_line(args)
        return _resume_screen(args)

    resume.set_defaults(func=run_resume)


def _host_screen(args: argparse.Namespace, rules: RuleSet, root: Path) -> int:
    from buraco_p2p.net.commands import UsageError as NetUsage
    from buraco_p2p.ui import netplay

    try:
        netplay.check_address(args)
        identity = netplay.identity_of(args)
    except NetUsage as exc:
        sys.stderr.write(f"buraco-p2p: {exc}\n")
        return 2
    feed = netplay.LobbyFeed(
        identity, root, rules=rules, preset=args.rules, overrides=tuple(args.rule),
        bots=args.bots, auto=args.auto_approve, listen=args.listen, port=args.port, lan=args.lan,
    )  # fmt: skip
    feed.model.minutes = args.minutes
    return netplay.run_full_screen(feed, ascii=args.ascii, lobby=feed.model)


def _join_screen(args: argparse.Namespace, root: Path) -> int:
    from buraco_p2p.net.commands import UsageError as NetUsage
    from buraco_p2p.ui import netplay

    try:
        netplay.check_address(args)
        identity = netplay.identity_of(args)
    except NetUsage as exc:
        sys.stderr.write(f"buraco-p2p: {exc}\n")
        return 2
    feed = netplay.LobbyFeed(identity, root, code=args.code, listen=args.listen, port=args.port)
    return netplay.run_full_screen(feed, ascii=args.ascii, lobby=feed.model)


def _resume_target(args: argparse.Namespace) -> tuple[Path, bytes, frozenset[bytes]]:
    """`resume_target`, and the bot marks saved with the table: a damaged marks file is a
    damaged table (`DamagedTable`), named before anything starts."""
    root, table = resume_target(args)
    try:
        return root, table, load_bot_keys(root, table)
    except StoreError as exc:
        raise DamagedTable(f"table {table.hex()} in {root}: {exc}") from None


def _resume_screen(args: argparse.Namespace) -> int:
    from buraco_p2p.ui import netplay

    try:
        root, table, bots = _resume_target(args)
    except ResumeError as exc:
        return resume_failed(exc)
    feed = netplay.ResumeFeed(netplay.identity_of(args), root, table, bot_keys=bots)
    return netplay.run_full_screen(feed, ascii=args.ascii, prog="buraco-p2p resume")


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
            return await _run_console(driver, bot_keys=bots)

    with restart_bots(root, table) or contextlib.nullcontext():
        return run_reporting(lambda: int(trio.run(main)), "buraco-p2p resume", (StoreError,))


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
    cluster = Cluster(rules.players, bot_root, None, humans=[0])
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
            _say(f"table created; you are {identity.nickname} ({identity.public.fingerprint()})")
            _say("invite code (give it to the other players):")
            _say(mesh.invite.to_text())
            cluster.invite = mesh.invite.to_text()
            for k in range(1, args.bots + 1):
                cluster.join(k)
            _say(f"* {args.bots} bots are joining; type /ready when every seat is taken")
            send, recv = trio.open_memory_channel[str](16)
            async with trio.open_nursery() as nursery:
                nursery.start_soon(_stdin_lines, send)
                code = await lobby.run(recv)
                nursery.cancel_scope.cancel()
    return code
