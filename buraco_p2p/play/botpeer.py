"""`buraco-p2p bot-peer`: one bot as its own peer process, as a person's client would be.

It hosts, joins or resumes a table (see `play.node`), plays its seat with a bot that sees only
its own view, and speaks a line protocol on stdout for the process that started it:

    invite CODE     the table's invite (after hosting, joining or resuming)
    table HEX       the table id (its directory in the data dir; what `--resume` takes)
    done N          the log is complete (the match closed, or `--hands` hands were played)
                    and, with `--log-out`, written there: N entries

It keeps serving the table (peers catching up fetch entries from it) until its standard input
ends, then exits 0. Used by `play`, `host --bots` and `selfplay --network`. Run by hand (its
input a terminal) it first says on stderr what it will do; an input that ends before the table
is under way (`< /dev/null`, a script's `&`) stops it at once, and it says why on stderr and
exits 1.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import random
import resource
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import trio

from buraco_p2p.bots import BOT_NAMES, DEFAULT_LEVEL, DEFAULT_SAMPLES, DEFAULT_THINK, make_bot
from buraco_p2p.engine import Move
from buraco_p2p.logfile import encode_log
from buraco_p2p.net.channel.identity import Identity
from buraco_p2p.net.mesh.commands import run_reporting
from buraco_p2p.net.reach.invite import Endpoint, Invite
from buraco_p2p.play.heir import SEED_ENV, Heirs, heir_log_path
from buraco_p2p.play.node import open_node
from buraco_p2p.play.store import StoreError, TableStore
from buraco_p2p.rules import RuleError, get_preset, parse_overrides
from buraco_p2p.session import Peer

__all__ = ["SEED_ENV", "cut_after_hands", "derive", "level_args", "register"]

LEVEL_FILE = "bot.json"  # in the data directory: the level a resumed bot plays at
MAX_THINK = 60.0
SEARCH_NICE = 10  # how much lower a searching bot's priority is than a person's client


def level_args(level: str | None, think: float | None) -> list[str]:
    """The `bot-peer` options that start a bot of `level` thinking `think` seconds a move
    (None: the bot peer's defaults)."""
    out = ["--bot-level", level] if level else []
    return out + (["--bot-think", f"{think:g}"] if think is not None else [])


def derive(seed: int, what: str) -> bytes:
    """A 32-byte value of a reproducible self-play run (never for real play)."""
    return hashlib.sha256(f"buraco-p2p/netselfplay/{seed}/{what}".encode()).digest()


def cut_after_hands(peer: Peer, hands: int | None) -> list[bytes] | None:
    """The log to keep once it is complete: all of it once the match closed, else the
    entries before hand `hands + 1` began (None while that has not happened)."""
    log = peer.log
    if peer.table.closed:
        return [e.wire for e in log]
    if hands is None:
        return None
    n = peer.table.n
    starts = [e.index for e in log if e.kind == "keys"][::n]
    if len(starts) > hands:
        return [e.wire for e in log[: starts[hands]]]
    return None


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "bot-peer",
        help="run one bot as its own peer process (used by play, host --bots, selfplay)",
        description=(
            "One bot as its own peer: it hosts, joins or resumes a table and plays its seat. "
            "It prints `invite CODE` and `table HEX`, then `done N` when the match is over "
            "(the log written to --log-out), and serves the table until its standard input "
            "ends (Ctrl-D): keep that open (`sleep infinity | buraco-p2p bot-peer ...` in a "
            "script). A log with a void agreement: start bots with --void ACTION and a short "
            "--timeout-ms, and stop one of them (kill it) once the match is under way."
        ),
    )
    how = p.add_mutually_exclusive_group(required=True)
    how.add_argument("--host", action="store_true", help="host a new table")
    how.add_argument("--join", metavar="CODE", help="join the table of an invite code")
    how.add_argument("--resume", metavar="TABLE", help="resume a table (its id, hex)")
    p.add_argument("--data-dir", required=True, metavar="DIR", help="where tables are kept")
    p.add_argument("--rules", default="classic", metavar="PRESET")
    p.add_argument("--rule", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--players", type=int, metavar="N")
    p.add_argument(
        "--bot-level", "--bot", dest="bot_level", choices=BOT_NAMES, metavar="LEVEL",
        help="easy, normal (the default) or strong; also heuristic (the player from before "
             "the levels) or random. A resumed bot keeps the level it was started with",
    )  # fmt: skip
    p.add_argument(
        "--bot-think", type=float, metavar="SECONDS",
        help=f"the strong level's time per move (default {DEFAULT_THINK:g}); with --seed it "
             f"searches {DEFAULT_SAMPLES} deals a move instead, so the run repeats",
    )  # fmt: skip
    p.add_argument("--name", default=None, metavar="NICK")
    p.add_argument("--seed", type=int, metavar="S", help="reproducible keys and table (tests)")
    p.add_argument("--index", type=int, default=0, metavar="I", help="with --seed")
    p.add_argument("--hands", type=int, metavar="N", help="done after N hands")
    p.add_argument("--log-out", metavar="FILE", help="write the log here when done")
    p.add_argument("--port", type=int, default=0, metavar="PORT", help="listen port")
    p.add_argument(
        "--listen", default="127.0.0.1", metavar="ADDR",
        help="numeric address to listen on (default 127.0.0.1)",
    )  # fmt: skip
    p.add_argument(
        "--advertise", metavar="ADDR",
        help="with --port: tell the peers ADDR:PORT, not the listening address (a forwarder's)",
    )  # fmt: skip
    p.add_argument("--timeout-ms", type=int, default=120_000, metavar="MS")
    p.add_argument("--void", choices=("void", "end", "replace"),
                   help="when a party has kept the table waiting --timeout-ms, propose (or "
                        "join) this agreement of the parties present: void (the hand is "
                        "dealt again), end (the match ends there) or replace (the host seats a "
                        "new bot in the silent party's place; without the host: end)")  # fmt: skip
    p.add_argument("--heir", action="store_true",
                   help="with --join (or --resume): take the seat a replace agreement "
                        "passes to us")  # fmt: skip
    p.add_argument("--stats", metavar="FILE", help="write timings (JSON) here when done")
    # A timed match's minute in seconds of this peer's clock: tests run a match with a time
    # limit of one minute in a fraction of a second.
    p.add_argument("--minute-seconds", type=float, default=60.0, help=argparse.SUPPRESS)
    p.add_argument(
        "--report-at", type=int, metavar="N", help="say `reached T` once the log holds N entries"
    )
    p.set_defaults(func=run)


def _announce(inv: Invite) -> None:
    _say(f"invite {inv.to_text()}")
    _say(f"table {inv.table_id.hex()}")


_VOIDS = {
    "void": "proposes that the present parties void the hand under way (it is dealt again)",
    "end": "proposes that the present parties end the match where it stands",
    "replace": (
        "proposes, if it is the host, that a new bot takes the silent party's seat from the "
        "next deal (it starts that bot itself), and otherwise that the match ends"
    ),
}


def _explain(args: argparse.Namespace, name: str) -> None:
    """What this bot peer will do, on stderr, for a person who started it by hand."""
    how = "hosting a table" if args.host else "joining a table" if args.join else "resuming a table"
    lines = [f"{how} as {name!r}, its seat played by the {args.bot_level} bot"]
    wait = f"{args.timeout_ms / 1000:g} s (--timeout-ms)"
    if args.void:
        lines.append(f"when a party keeps the table waiting {wait}, it {_VOIDS[args.void]}; "
                     "it joins such a proposal made by another party too")  # fmt: skip
    else:
        lines.append(f"it proposes nothing when a party keeps the table waiting {wait} (see "
                     "--void), but joins what another party proposes")  # fmt: skip
    out = f"writes the log to {args.log_out}" if args.log_out else "keeps the log in --data-dir"
    lines.append(f"it prints `invite CODE` for the others (buraco-p2p join CODE), `done N` "
                 f"when the match is over, and {out}")  # fmt: skip
    lines.append("it serves the table until its standard input ends (Ctrl-D)")
    for line in lines:
        sys.stderr.write(f"buraco-p2p bot-peer: {line}\n")
    sys.stderr.flush()


_EARLY_EOF = (
    "buraco-p2p bot-peer: standard input ended before the table was under way, so this bot "
    "stops: it serves its table until its input ends. Keep the input open (run it in a "
    "terminal, or `sleep infinity | buraco-p2p bot-peer ...` in a script) and stop it by "
    "closing it.\n"
)


def _say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def run(args: argparse.Namespace) -> int:
    return run_reporting(lambda: int(trio.run(_main, args)), "buraco-p2p bot-peer", (StoreError,))


async def _main(args: argparse.Namespace) -> int:
    root = Path(args.data_dir)
    seed: int | None = args.seed
    i = args.index
    name = args.name or f"bot{i}"
    ident_seed = derive(seed, f"identity/{i}") if seed is not None else os.urandom(32)
    if os.environ.get(SEED_ENV):
        # a host that starts bots for its table knows their keys and seats them at once
        ident_seed = bytes.fromhex(os.environ[SEED_ENV])
    if args.advertise and not args.port:
        sys.stderr.write("buraco-p2p bot-peer: error: --advertise needs --port\n")
        return 2
    rules = None
    resume = bytes.fromhex(args.resume) if args.resume else None
    if resume is not None:
        _, saved_seed = TableStore.for_table(resume, root).load_secret()
        ident_seed = saved_seed or ident_seed
    elif args.host:
        try:
            rules = get_preset(args.rules)
            changes = parse_overrides(args.rule)
            if args.players is not None:
                changes["players"] = args.players
            if changes:
                rules = rules.with_overrides(changes)
        except (RuleError, ValueError) as exc:
            sys.stderr.write(f"buraco-p2p bot-peer: error: {exc}\n")
            return 2
    identity = Identity.from_seed(ident_seed, name)
    try:
        _settle_level(args, root)
    except ValueError as exc:
        sys.stderr.write(f"buraco-p2p bot-peer: error: {exc}\n")
        return 2
    bot = make_bot(args.bot_level, None if seed is not None else args.bot_think)
    if args.bot_level == "strong":
        # the search takes what the machine can spare, never a person's own client's share
        with contextlib.suppress(OSError):
            os.nice(SEARCH_NICE)

    def choose(peer: Peer, rng: random.Random) -> Move:
        view = peer.table.view
        assert view is not None
        return bot.choose_move(view, rng)

    invite = Invite.from_text(args.join) if args.join else None
    if sys.stdin.isatty():
        _explain(args, name)
    announced: list[Invite] = []  # the table is under way once its invite is out

    def on_invite(inv: Invite) -> None:
        announced.append(inv)
        _announce(inv)

    async with trio.open_nursery() as nursery:

        async def parent_gone() -> None:
            # the process that started us closed our input, or died: nobody needs us
            await _stdin_closed()
            nursery.cancel_scope.cancel()

        nursery.start_soon(parent_gone)
        await _serve(
            args, root, identity, choose, invite, resume, rules, seed, ident_seed, on_invite
        )
    if not announced:
        sys.stderr.write(_EARLY_EOF)
        return 1
    return 0


async def _serve(
    args: argparse.Namespace, root: Path, identity: Identity, choose: Any,
    invite: Invite | None, resume: bytes | None, rules: Any, seed: int | None,
    ident_seed: bytes, on_invite: Callable[[Invite], None],
) -> None:  # fmt: skip
    i = args.index
    async with open_node(
        identity, root, rules=rules, invite=invite, resume=resume,
        table_id=derive(seed, "table")[:16] if seed is not None and args.host else None,
        rng_secret=derive(seed, f"rng/{i}") if seed is not None else None,
        identity_seed=ident_seed, timeout_ms=args.timeout_ms, port=args.port,
        listen_host=args.listen,
        advertise=(Endpoint.parse(args.advertise, args.port),) if args.advertise else None,
        on_invite=on_invite, heir=args.heir,
        choose=choose, void_action=args.void, minute=args.minute_seconds,
    ) as driver:  # fmt: skip
        _bot_replaces(args, driver, seed)
        if args.report_at is not None:
            await driver.wait_until(lambda p: len(p.log) >= args.report_at)
            _say(f"reached {time.monotonic():.6f}")
        await driver.wait_until(lambda p: cut_after_hands(p, args.hands) is not None)
        wires = cut_after_hands(driver.peer, args.hands)
        assert wires is not None
        if args.log_out:
            tmp = args.log_out + ".tmp"
            with open(tmp, "wb") as f:
                f.write(encode_log(wires))
            os.replace(tmp, args.log_out)
        if args.stats:
            _write_stats(args.stats, driver, wires)
        _say(f"done {len(wires)}")
        await trio.sleep_forever()


def _bot_replaces(args: argparse.Namespace, driver: Any, seed: int | None) -> None:
    """Bots agree to what a present party proposes; a hosting bot starts its heirs as it
    was started itself (strength, timeout, hands, a log next to its own)."""
    driver.agree_any = True
    heirs = driver.replacer
    if not isinstance(heirs, Heirs):
        return
    heirs.args = ["--bot-level", args.bot_level, "--bot-think", f"{args.bot_think:g}",
                  "--timeout-ms", str(args.timeout_ms),
                  "--minute-seconds", str(args.minute_seconds)]  # fmt: skip
    if args.void:
        heirs.args += ["--void", args.void]
    if args.hands is not None:
        heirs.args += ["--hands", str(args.hands)]
    if args.log_out:
        heirs.log_out = lambda party: heir_log_path(args.log_out, party)
    if seed is not None:
        heirs.make_seed = lambda party: derive(seed, f"heir/{party}/{len(driver.peer.log)}")


def _settle_level(args: argparse.Namespace, root: Path) -> None:
    """The level and thinking time: as given, else as saved in the data directory when this
    bot was first started (a resumed bot plays as before), else the defaults; saved there."""
    saved: dict[str, Any] = {}
    path = root / LEVEL_FILE
    with contextlib.suppress(OSError, ValueError):
        doc = json.loads(path.read_text())
        if isinstance(doc, dict):
            saved = doc
    if args.bot_level is None:
        level = saved.get("level")
        args.bot_level = level if level in BOT_NAMES else DEFAULT_LEVEL
    if args.bot_think is None:
        think = saved.get("think")
        ok = isinstance(think, int | float) and not isinstance(think, bool)
        args.bot_think = float(think) if ok and think is not None else DEFAULT_THINK
    if not 0 < args.bot_think <= MAX_THINK:
        raise ValueError(f"--bot-think must be more than 0 and at most {MAX_THINK:g} seconds")
    root.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"level": args.bot_level, "think": args.bot_think}))
    os.replace(tmp, path)


def _write_stats(path: str, driver: Any, wires: list[bytes]) -> None:
    """Timings for the benchmark: entries applied here (index, kind, author, time), our
    moves' play times, the peak resident memory, the processor time used."""
    log = driver.peer.log[: len(wires)]
    usage = resource.getrusage(resource.RUSAGE_SELF)
    doc = {
        "applied": [[e.index, e.kind, e.author, driver.applied_at.get(e.index)] for e in log],
        "played": [[i, t] for i, t in driver.played_at.items()],
        "party": driver.peer.party,
        "rss_mb": usage.ru_maxrss / 1024,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "syncs": driver.store.syncs,
    }
    with open(path, "w") as f:
        json.dump(doc, f)


async def _stdin_closed() -> None:
    """Return when standard input ends (the parent is finished with us, or gone).

    Read in the event loop from a copy of the descriptor, never by a blocked thread: a thread
    still inside `sys.stdin`'s reader when the process exits makes the interpreter's shutdown
    abort ("could not acquire lock for <stdin>"). A bot peer's input is a pipe from the
    process that started it, so making it non-blocking touches nobody else's terminal.
    """
    async with trio.lowlevel.FdStream(os.dup(sys.stdin.fileno())) as stream:
        while await stream.receive_some(4096):
            pass
