"""`buraco-p2p play --line` and `buraco-p2p resume`: you and bot peer processes on loopback.

`play` hosts a table in this process (your peer, with your identity from the config
directory) and starts one `bot-peer` process per other seat, each joining with the invite as a
person's client would: its own identity, its own link, the same session and cryptography. The
match is then played in line mode. Everything is in the data directory, so `resume TABLE`
(the table id `play` prints) brings your peer back; bots still running carry on with you.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import trio

from buraco_p2p.net.channel.identity import Identity, load_or_create_identity
from buraco_p2p.net.mesh.commands import _stdin_lines, run_reporting
from buraco_p2p.net.reach.invite import Invite
from buraco_p2p.play.botmarks import save_bot_keys
from buraco_p2p.play.botpeer import level_args
from buraco_p2p.play.cluster import Cluster
from buraco_p2p.play.console import console
from buraco_p2p.play.matchlog import program
from buraco_p2p.play.node import open_node
from buraco_p2p.play.store import StoreError, TableStore, default_data_dir
from buraco_p2p.rules import RuleSet
from buraco_p2p.text.narration import count

__all__ = [
    "DamagedTable",
    "ResumeError",
    "play_line",
    "resume_failed",
    "resume_line",
    "resume_target",
]


MAX_LISTED = 20


def _say(text: str) -> None:
    print(text, flush=True)


def _me(config_dir: str | None, nick: str | None) -> Identity:
    return load_or_create_identity(Path(config_dir) if config_dir else None, nick)


def play_line(args: argparse.Namespace, rules: RuleSet) -> int:
    """You at seat 0 of a new table, bots at the others; the match in line mode."""
    from buraco_p2p.play.selves import NoSelf, claim_for

    try:
        claim_for(args)
    except NoSelf as exc:
        sys.stderr.write(f"buraco-p2p play: error: {exc}\n")
        return 4
    if args.self_note:
        _say(f"* {args.self_note}")
    root = Path(args.data_dir)
    me = _me(args.config_dir, getattr(args, "nick", None))
    bot_root = Path(tempfile.mkdtemp(prefix="bots-", dir=_ensure(root)))
    level = getattr(args, "bots", None) or getattr(args, "bot_level", None)
    peer_args = level_args(level, getattr(args, "bot_think", None))
    cluster = Cluster(rules.players, bot_root, None, seed=None, humans=[0], peer_args=peer_args)
    try:
        with cluster:
            return trio.run(_play_main, me, root, rules, cluster, args.dir_options)
    finally:
        _forget_bots_if_done(root, cluster.table, bot_root)


def _forget_bots_if_done(root: Path, table: str | None, bot_root: Path) -> None:
    """The bot peers' directory of a `play` that made no table, or whose match is over,
    goes (`hostjoin.forget_bots`); an unfinished table keeps it for `resume`."""
    import shutil

    from buraco_p2p.play.summary import load_summary

    summary = None if table is None else load_summary(root / "tables" / table)
    if table is None or (summary is not None and summary.over):
        shutil.rmtree(bot_root, ignore_errors=True)


def _ensure(p: Path) -> Path:
    p.mkdir(parents=True, exist_ok=True, mode=0o700)
    return p


async def _play_main(
    me: Identity, root: Path, rules: RuleSet, cluster: Cluster, options: str
) -> int:
    def on_invite(inv: Invite) -> None:
        cluster.invite = inv.to_text()
        cluster.table = inv.table_id.hex()
        _say(f"table {inv.table_id.hex()} (resume with: buraco-p2p resume {inv.table_id.hex()})")
        for i in range(1, rules.players):
            cluster.join(i)
        _say(f"{rules.players - 1} bot peers are joining; the seats are drawn by the table")

    async with open_node(me, root, rules=rules, on_invite=on_invite) as driver:
        t = driver.peer.table
        # Every other seat is a bot peer we started: marked again on `resume`.
        save_bot_keys(root, t.terms.table_id,
                      frozenset(k.raw for k in t.terms.keys if k.raw != me.public.raw))  # fmt: skip
        return await _run_console(driver, bots=True, root=root, options=options)


async def _run_console(
    driver: object, bots: bool = False, bot_keys: frozenset[bytes] = frozenset(),
    root: Path | None = None, options: str = "",
) -> int:
    from buraco_p2p.play.driver import Driver

    assert isinstance(driver, Driver)
    send, recv = trio.open_memory_channel[str](64)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(_stdin_lines, send)
        closed = await console(driver, recv, _say, bot_keys=bot_keys, bots=bots)
        nursery.cancel_scope.cancel()
    tid = driver.peer.table.terms.table_id
    if closed:
        for line in finished_lines(driver, root):
            _say(line)
        return 0
    again = f"{program()} resume {tid.hex()}{' ' + options if options else ''}"
    _say(f"left table {tid.hex()}; come back with: {again}")
    return 0


def finished_lines(driver: object, root: Path | None) -> list[str]:
    """A closed match's last words in line mode: its log kept in the data directory's
    `logs/` (`play.matchlog`), with the commands that audit and replay it."""
    from buraco_p2p.play.driver import Driver
    from buraco_p2p.play.matchlog import log_path, save_log, told

    assert isinstance(driver, Driver)
    tid = driver.peer.table.terms.table_id
    if root is None:
        return ["the match is over"]
    path = log_path(root, tid)
    try:
        save_log(path, [e.wire for e in driver.peer.log], tid)
    except OSError as exc:
        return [f"the match is over; its log could not be kept in {path}: {exc.strerror or exc}"]
    return ["the match is over", *told(path)]


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
        raise ResumeError("name the TABLE to resume (`resume` alone lists them)")
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


def saved_tables_text(config: str | None, data: str | None) -> str:
    """What `resume` without a table says: the tables kept by every self of these
    directories (`play.selves`), unfinished then finished, newest first, each with its
    players, rules, hands and scores where its summary says them (`play.summary`) and when
    it was last played (its log's time); the command that resumes one, or replays one."""
    from buraco_p2p.play.matchlog import log_path, replay_command
    from buraco_p2p.play.selves import dir_options, selves
    from buraco_p2p.play.summary import load_summary

    found: list[tuple[float, Path, Path, int]] = []  # (time, table dir, data dir, self)
    for s in selves(Path(config) if config else None, Path(data) if data else None):
        tables = s.data / "tables"
        for d in tables.iterdir() if tables.is_dir() else ():
            if (d / "secret").exists():
                log = d / "log"
                when = (log if log.exists() else d).stat().st_mtime
                found.append((when, d, s.data, s.number))
    where = selves(Path(config) if config else None, Path(data) if data else None)[0].data
    if not found:
        return f"there is no saved table in {where}"
    found.sort(key=lambda f: -f[0])
    opts = dir_options(config, data)
    resume = f"{program()} resume TABLE{' ' + opts if opts else ''}"
    going: list[str] = []
    done: list[str] = []
    for when, d, root, number in found[:MAX_LISTED]:
        summary = load_summary(d)
        stamp = time.strftime("%Y-%m-%d %H:%M", time.localtime(when))
        head = f"  {d.name}  last played {stamp}"
        if number > 1:
            head += f" (the second player on this machine, self {number})"
        lines = [head]
        if summary is not None:
            hands = (f"{count(summary.hands, 'hand')} played" if summary.over
                     else f"hand {summary.hands + 1} in play")  # fmt: skip
            lines.append(f"      {_printable(summary.rules)} · {hands} · "
                         f"{_printable(summary.sides_text())}")  # fmt: skip
        if summary is not None and summary.over:
            path = log_path(root, bytes.fromhex(d.name))
            lines.append(f"      {replay_command(path if path.exists() else d / 'log')}")
            done.extend(lines)
        else:
            going.extend(lines)
    out = []
    if going:
        out += [f"Unfinished tables, newest first (resume one with: {resume}):", *going]
    else:
        out += [f"No unfinished table to resume in {where}: every table kept there is over."]
    if done:
        out += ["Finished tables, newest first (replay one with the command under it):", *done]
    return "\n".join(out)


def _printable(text: str) -> str:
    """A file's text with nothing that could move the terminal's cursor."""
    return "".join(ch if ch.isprintable() else "?" for ch in text)


def resume_failed(exc: ResumeError) -> int:
    """Say why `resume` cannot start; the exit status for that."""
    sys.stderr.write(f"buraco-p2p resume: error: {exc}\n")
    return exc.code


def list_tables(args: argparse.Namespace) -> int:
    """`resume` without a table: the saved tables, on standard output."""
    print(saved_tables_text(getattr(args, "config_dir", None), args.data_dir), flush=True)
    return 0


def resume_line(args: argparse.Namespace) -> int:
    if not args.table:
        return list_tables(args)
    try:
        root, table = resume_target(args)
    except ResumeError as exc:
        return resume_failed(exc)
    me = _me(args.config_dir, None)

    async def main() -> int:
        async with open_node(me, root, resume=table) as driver:
            return await _run_console(driver, root=root)

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
    rp.add_argument("--data-dir", metavar="DIR",
                    help="where tables are kept (default: the user data directory)")  # fmt: skip
    rp.add_argument("--config-dir", metavar="DIR", help="where your identity is kept")
    rp.set_defaults(func=resume_line)
