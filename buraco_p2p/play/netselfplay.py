"""`buraco-p2p selfplay --network`: one bot peer process per seat over loopback.

Each peer writes its own copy of the match log to `DIR/peer-<i>.log`; the command then checks
that the copies are byte-identical and that the audit accepts them (with `--hands`, as the
first hands of a match). The option is added to the `selfplay` parser, which otherwise plays
in one process; the peers' table directories go under `DIR/peers/`.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from buraco_p2p.audit import verify_path
from buraco_p2p.bots import DEFAULT_LEVEL
from buraco_p2p.play.cluster import Cluster, ClusterError

__all__ = ["register", "run_network"]

EXIT_USAGE = 2


def register(subparsers: Any) -> None:
    """Add `--network` and `--log-dir` to the `selfplay` subcommand registered before us."""
    sp: argparse.ArgumentParser = subparsers.choices["selfplay"]
    sp.add_argument(
        "--network", action="store_true",
        help="one bot peer process per seat over loopback, all crypto on (needs --log-dir)",
    )  # fmt: skip
    sp.add_argument("--log-dir", metavar="DIR", help="with --network: one log per peer here")
    sp.add_argument(
        "--timeout", type=float, default=600.0, metavar="S",
        help="with --network: give up after S seconds (default 600)",
    )  # fmt: skip
    # The peers' minute in seconds of their clocks (a test's fast clock for --minutes).
    sp.add_argument("--minute-seconds", type=float, default=None, help=argparse.SUPPRESS)
    inner: Callable[[argparse.Namespace], int] = sp.get_default("func")

    def func(args: argparse.Namespace) -> int:
        if args.network:
            return run_network(args)
        return inner(args)

    sp.set_defaults(func=func)


def run_network(args: argparse.Namespace) -> int:
    if args.log_dir is None:
        sys.stderr.write("buraco-p2p selfplay: error: --network needs --log-dir DIR\n")
        return EXIT_USAGE
    if args.hands is not None and args.hands < 1:
        sys.stderr.write("buraco-p2p selfplay: error: --hands must be at least 1\n")
        return EXIT_USAGE
    log_dir = Path(args.log_dir)
    log_dir.mkdir(parents=True, exist_ok=True)
    host_args = ["--rules", args.rules or "classic"]
    for r in args.rule:
        host_args += ["--rule", r]
    if args.players is not None:
        host_args += ["--players", str(args.players)]
    if args.minutes is not None:
        host_args += ["--rule", f"minutes={args.minutes}"]
    try:
        players = _players(args)
    except ValueError as exc:  # UsageError: a bad --players, --minutes or --rule
        sys.stderr.write(f"buraco-p2p selfplay: error: {exc}\n")
        return EXIT_USAGE
    names = [b.strip() for b in (args.bots or args.bot_level or DEFAULT_LEVEL).split(",")]
    root = Path(tempfile.mkdtemp(prefix="peers-", dir=log_dir))
    t0 = time.monotonic()
    cluster = Cluster(players, root, log_dir, seed=args.seed, hands=args.hands,
                      host_args=host_args)  # fmt: skip
    if len(names) == 1:
        cluster.peer_args = ["--bot-level", names[0]]
    if args.minute_seconds is not None:
        cluster.peer_args += ["--minute-seconds", str(args.minute_seconds)]
    try:
        with cluster:
            cluster.start()
            cluster.wait_done(args.timeout)
    except ClusterError as exc:
        sys.stderr.write(f"buraco-p2p selfplay: {exc}\n")
        return 1
    logs = [cluster.log_path(i).read_bytes() for i in range(players)]
    same = all(x == logs[0] for x in logs)
    verdicts = [verify_path(str(cluster.log_path(i)), partial=args.hands is not None)
                for i in range(players)]  # fmt: skip
    ok = all(v.code == 0 for v in verdicts)
    out = sys.stdout
    out.write(
        f"selfplay --network: {players} peer processes, {time.monotonic() - t0:.1f} s; "
        f"logs in {log_dir} are {'byte-identical' if same else 'DIFFERENT'}; "
        f"audit: {'fair' if ok else 'REFUSED'}\n"
    )
    return 0 if same and ok else 1


def _players(args: argparse.Namespace) -> int:
    from buraco_p2p.bots.selfplay import resolve_rules

    return resolve_rules(args.rules or "classic", args.rule, args.players, args.minutes).players
