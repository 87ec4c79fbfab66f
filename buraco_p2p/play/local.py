"""`buraco-p2p play --line` and `buraco-p2p resume`: you and bot peer processes on loopback.

`play` hosts a table in this process (your peer, with your identity from the config
directory) and starts one `bot-peer` process per other seat, each joining with the invite as a
person's client would: its own identity, its own link, the same session and cryptography. The
match is then played in line mode. Everything is in the data directory, so `resume TABLE`
(the table id `play` prints) brings your peer back; bots still running carry on with you.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import trio

from buraco_p2p.net.channel.identity import Identity, load_or_create_identity
from buraco_p2p.net.mesh.commands import _stdin_lines, run_reporting
from buraco_p2p.net.reach.invite import Invite
from buraco_p2p.play.botpeer import level_args
from buraco_p2p.play.cluster import Cluster
from buraco_p2p.play.console import console
from buraco_p2p.play.node import open_node
from buraco_p2p.play.store import StoreError, TableStore, default_data_dir
from buraco_p2p.rules import RuleSet

__all__ = [
    "DamagedTable",
    "ResumeError",
    "play_line",
    "resume_failed",
    "resume_line",
    "resume_target",
]


def _say(text: str) -> None:
    print(text, flush=True)


def _me(config_dir: str | None, nick: str | None) -> Identity:
    return load_or_create_identity(Path(config_dir) if config_dir else None, nick)


def play_line(args: argparse.Namespace, rules: RuleSet) -> int:
    """You at seat 0 of a new table, bots at the others; the match in line mode."""
    root = Path(args.data_dir) if getattr(args, "data_dir", None) else default_data_dir()
    me = _me(getattr(args, "config_dir", None), getattr(args, "nick", None))
    bot_root = Path(tempfile.mkdtemp(prefix="bots-", dir=_ensure(root)))
    level = getattr(args, "bots", None) or getattr(args, "bot_level", None)
    peer_args = level_args(level, getattr(args, "bot_think", None))
    cluster = Cluster(rules.players, bot_root, None, seed=None, humans=[0], peer_args=peer_args)
    with cluster:
        return trio.run(_play_main, me, root, rules, cluster)


def _ensure(p: Path) -> Path:
    p.mkdir(parents=True, exist_ok=True, mode=0o700)
    return p


async def _play_main(me: Identity, root: Path, rules: RuleSet, cluster: Cluster) -> int:
    def on_invite(inv: Invite) -> None:
        cluster.invite = inv.to_text()
        cluster.table = inv.table_id.hex()
        _say(f"table {inv.table_id.hex()} (resume with: buraco-p2p resume {inv.table_id.hex()})")
        for i in range(1, rules.players):
            cluster.join(i)
        _say(f"{rules.players - 1} bot peers are joining; the seats are drawn by the table")

    async with open_node(me, root, rules=rules, on_invite=on_invite) as driver:
        return await _run_console(driver, bots=True)


async def _run_console(
    driver: object, bots: bool = False, bot_keys: frozenset[bytes] = frozenset()
) -> int:
    from buraco_p2p.play.driver import Driver

    assert isinstance(driver, Driver)
    send, recv = trio.open_memory_channel[str](64)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(_stdin_lines, send)
        closed = await console(driver, recv, _say, bot_keys=bot_keys, bots=bots)
        nursery.cancel_scope.cancel()
    if closed:
        _say("the match is over; its log is in the data directory")
        return 0
    _say("left the table; `buraco-p2p resume` returns to it")
    return 0


class ResumeError(ValueError):
    """`resume TABLE` names no table this client can resume; the message says why."""

    code = 2  # a usage error: the id is not one


class DamagedTable(ResumeError):
    """The table's directory is there but a file in it cannot be used."""

    code = 4  # EXIT_DATA, as for a saved log that no longer checks


def resume_target(args: argparse.Namespace) -> tuple[Path, bytes]:
    """The data directory and table id `resume TABLE` names (`args.table`, `args.data_dir`),
    checked before anything is opened: the id must be hex and the table's directory must hold
    its secret, or this raises `ResumeError`. The line and full-screen clients share it, so
    both refuse the same input with the same words."""
    root = Path(args.data_dir) if args.data_dir else default_data_dir()
    if not args.table:
        raise ResumeError(saved_tables_text(root))
    try:
        table = bytes.fromhex(args.table)
    except ValueError:
        raise ResumeError("TABLE is a table id in hex") from None
    if not (root / "tables" / table.hex() / "secret").exists():
        raise ResumeError(f"no table {table.hex()} in {root}")
    store = TableStore.for_table(table, root)
    try:  # files on disk are untrusted: a damaged one is named before anything starts
        store.load_meta()
        store.load_secret()
    except StoreError as exc:
        raise DamagedTable(f"table {table.hex()} in {root}: {exc}") from None
    return root, table


def saved_tables_text(root: Path) -> str:
    """What `resume` without a table says: the saved tables, newest first, to pick from."""
    tables = root / "tables"
    found = sorted(
        (d for d in tables.iterdir() if (d / "secret").exists()) if tables.is_dir() else (),
        key=lambda d: d.stat().st_mtime,
        reverse=True,
    )
    if not found:
        return f"name the TABLE to resume; there is no saved table in {root}"
    lines = [f"name the TABLE to resume; the saved tables in {root}, newest first:"]
    for d in found[:20]:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(d.stat().st_mtime))
        lines.append(f"  {d.name}  (last played {when})")
    lines.append(f"then: buraco-p2p resume {found[0].name}")
    return "\n".join(lines)


def resume_failed(exc: ResumeError) -> int:
    """Say why `resume` cannot start; the exit status for that."""
    sys.stderr.write(f"buraco-p2p resume: error: {exc}\n")
    return exc.code


def resume_line(args: argparse.Namespace) -> int:
    try:
        root, table = resume_target(args)
    except ResumeError as exc:
        return resume_failed(exc)
    me = _me(args.config_dir, None)

    async def main() -> int:
        async with open_node(me, root, resume=table) as driver:
            return await _run_console(driver)

    return run_reporting(lambda: int(trio.run(main)), "buraco-p2p resume", (StoreError,))


def register(subparsers: object) -> None:
    rp = subparsers.add_parser(  # type: ignore[attr-defined]
        "resume",
        help="return to a table after a crash or a quit (full screen on a terminal, else "
        "line mode)",
        description="Return to a table kept in the data directory: the full-screen client on "
        "a terminal, line mode otherwise (or with --line). Without TABLE, lists the saved "
        "tables.",
    )
    rp.add_argument("table", metavar="TABLE", nargs="?", default="",
                    help="the table id (hex) `play`, `host` or `join` printed; none: list them")
    rp.add_argument("--data-dir", metavar="DIR", help=f"tables directory (default {os.sep}...)")
    rp.add_argument("--config-dir", metavar="DIR", help="where your identity is kept")
    rp.set_defaults(func=resume_line)
