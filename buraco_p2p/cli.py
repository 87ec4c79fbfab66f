"""The `buraco-p2p` command line: the top of the import graph.

Each subcommand lives with the layer it drives (bots, net, ...) and registers itself through a
`register(subparsers)` function; this module imports those modules by name and assembles them,
so the entry point's dependencies are visible here and the import arrows keep pointing down.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

from buraco_p2p import __version__, audit
from buraco_p2p.bots import selfplay
from buraco_p2p.net.mesh import commands
from buraco_p2p.play import botpeer, hostjoin, local, netselfplay
from buraco_p2p.replay import command as replay
from buraco_p2p.rules import RuleSet
from buraco_p2p.ui import command as play

# Each exposes `register(subparsers)`; every parser it registers sets `func=` to a callable
# taking the parsed namespace and returning an exit code.
COMMAND_MODULES: tuple[ModuleType, ...] = (
    commands,
    selfplay,
    audit,
    play,
    botpeer,
    netselfplay,
    local,
    hostjoin,
    replay,
)


class FullScreen:
    """`host`, `join` and `resume` in the full-screen client (`hostjoin.FullScreen`): the
    play layer chooses between it and the line client on a terminal, but only this layer,
    above both, may hand it the UI (imported when first used, as before: the line client
    and the bot processes never load it)."""

    def host(self, args: argparse.Namespace, rules: RuleSet, root: Path) -> int:
        from buraco_p2p.net.mesh.commands import UsageError as NetUsage
        from buraco_p2p.ui import netplay

        try:
            netplay.check_address(args)
            identity = netplay.identity_of(args)
        except NetUsage as exc:
            sys.stderr.write(f"buraco-p2p: {exc}\n")
            return 2
        feed = netplay.LobbyFeed(
            identity, root, rules=rules, preset=args.rules, overrides=tuple(args.rule),
            bots=args.bots, auto=args.auto_approve, listen=args.listen, port=args.port,
            lan=args.lan, reach=args,
        )  # fmt: skip
        feed.model.minutes = args.minutes
        return netplay.run_full_screen(feed, ascii=args.ascii, lobby=feed.model)

    def join(self, args: argparse.Namespace, root: Path) -> int:
        from buraco_p2p.net.mesh.commands import UsageError as NetUsage
        from buraco_p2p.ui import netplay

        try:
            netplay.check_address(args)
            identity = netplay.identity_of(args)
        except NetUsage as exc:
            sys.stderr.write(f"buraco-p2p: {exc}\n")
            return 2
        feed = netplay.LobbyFeed(
            identity, root, code=args.code, listen=args.listen, port=args.port, reach=args
        )
        return netplay.run_full_screen(feed, ascii=args.ascii, lobby=feed.model)

    def resume(
        self, args: argparse.Namespace, root: Path, table: bytes, bots: frozenset[bytes]
    ) -> int:
        from buraco_p2p.ui import netplay

        feed = netplay.ResumeFeed(
            netplay.identity_of(args), root, table, bot_keys=bots, reach=args
        )
        return netplay.run_full_screen(feed, ascii=args.ascii, prog="buraco-p2p resume")


def replay_full_screen(opened: replay.Opened) -> int:
    """`replay` on a terminal: the full-screen replay, handed to the replay command from this
    layer, above both (imported when first used, as the other screens)."""
    from buraco_p2p.ui import replay_app

    return replay_app.show(opened)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="buraco-p2p",
        description="Peer-to-peer Buraco in the terminal: no server, cryptographically fair cards.",
    )
    parser.add_argument("--version", action="version", version=f"buraco-p2p {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in COMMAND_MODULES:
        if module is hostjoin:
            hostjoin.register(subparsers, FullScreen())
        elif module is replay:
            replay.register(subparsers, replay_full_screen)
        else:
            module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    func = getattr(args, "func", None)
    if func is None:
        parser.print_help(sys.stderr)
        return 2
    code: int = func(args)
    return code
