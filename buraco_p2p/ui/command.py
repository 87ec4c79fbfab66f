"""`buraco-p2p play`: a match at the practice table, in the full-screen client.

With a terminal on both standard input and output the client opens full screen, the player in
seat 0 and bots of `--bot-level` (easy, normal or strong) in the others. Without one (a pipe,
a script, CI) nothing could be played interactively, so the command prints a match among
four bots instead, as it always has, and ends by itself.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from buraco_p2p.bots import DEFAULT_LEVEL, DEFAULT_THINK, make_level, selfplay
from buraco_p2p.play import local
from buraco_p2p.play.options import add_hands_option, hands_rule
from buraco_p2p.ui.app import run_client
from buraco_p2p.ui.practice import PracticeTable
from buraco_p2p.ui.theme import no_color

MAX_BOT_DELAY = 10.0


def register(subparsers: Any) -> None:
    """Add the `play` subcommand (see `buraco_p2p.cli`)."""
    pp = subparsers.add_parser(
        "play",
        help="play a match against bot peers on this machine (full screen)",
        description=(
            "Play a match against bots (--bot-level): each bot is a peer process of its own, "
            "over loopback, running the same session and cryptography as a person's client "
            "(every shuffle and card verified), and the match is kept in the data directory "
            "(`resume`). Opens the full-screen client (? lists the keys); --line plays by typing; "
            "--practice (or any --seed) deals a practice table in this process, without "
            "cryptography. Without a terminal, prints a match among four bots instead."
        ),
    )
    pp.add_argument("--rules", default="us", metavar="PRESET", help="rule preset (default us)")
    pp.add_argument(
        "--rule",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override one parameter of the preset (repeatable)",
    )
    pp.add_argument("--players", type=int, metavar="N", help="seats at the table (rule players)")
    selfplay.add_minutes_option(pp)
    add_hands_option(pp)
    pp.add_argument("--seed", type=int, metavar="N", help="seed of the deals and the bots")
    pp.add_argument("--ascii", action="store_true", help="letters for suits (S H D C)")
    pp.add_argument(
        "--bot-delay",
        type=float,
        default=0.6,
        metavar="SECONDS",
        help="pause on screen after each move of another player (default 0.6)",
    )
    pp.add_argument(
        "--line",
        action="store_true",
        help="play in line mode against bot peer processes, all cryptography on",
    )
    pp.add_argument("--bots", choices=("heuristic", "random"), help="bot strength (--line)")
    selfplay.add_level_options(pp, "the bots' level")
    pp.add_argument("--data-dir", metavar="DIR", help="where tables are kept")
    pp.add_argument(
        "--practice",
        action="store_true",
        help="the practice table in this process, no cryptography (implied by --seed)",
    )
    pp.set_defaults(func=run_play)


def run_play(args: argparse.Namespace) -> int:
    try:
        rules = selfplay.resolve_rules(args.rules, hands_rule(args), args.players, args.minutes)
        if not 0 <= args.bot_delay <= MAX_BOT_DELAY:
            raise selfplay.UsageError(f"--bot-delay must be 0..{MAX_BOT_DELAY:g} seconds")
        selfplay.check_think(args.bot_think)
    except selfplay.UsageError as exc:
        sys.stderr.write(f"buraco-p2p play: error: {exc}\n")
        return selfplay.EXIT_USAGE
    if args.line:
        return local.play_line(args, rules)
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        return selfplay.run_play(args)
    # A seeded deal can only be dealt without cryptography: --seed means the practice table.
    if not args.practice and args.seed is None:
        from pathlib import Path

        from buraco_p2p.net.channel.identity import load_or_create_identity
        from buraco_p2p.play.selves import NoSelf, claim_for
        from buraco_p2p.ui.session_feed import SessionFeed

        try:
            claim_for(args)
        except NoSelf as exc:
            sys.stderr.write(f"buraco-p2p play: error: {exc}\n")
            return 4
        root = Path(args.data_dir)
        me = load_or_create_identity(Path(args.config_dir), getattr(args, "nick", None))
        session = SessionFeed(rules, me, root, bots=args.bots or args.bot_level or DEFAULT_LEVEL,
                              think=args.bot_think)
        if args.self_note:
            session.line(None, args.self_note)
        session.pace = args.bot_delay  # on the screen only: the bots play at their own speed
        session.dir_options = args.dir_options
        run_client(session, ascii=args.ascii, colour=not no_color())
        for line in session.farewell():
            print(line, flush=True)
        return 0
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "big")
    level = args.bot_level or DEFAULT_LEVEL
    # a given seed replays a practice match: the strong level searches a fixed number of deals
    think = None if args.seed is not None else args.bot_think or DEFAULT_THINK
    bot = make_level(level, think)
    feed = PracticeTable(rules, seed, bot_delay=args.bot_delay, bot=bot, bot_level=level)
    run_client(feed, ascii=args.ascii, colour=not no_color())
    return 0
