"""The `buraco-p2p` command line: the top of the import graph.

Each subcommand lives with the layer it drives (bots, net, ...) and registers itself through a
`register(subparsers)` function; this module imports those modules by name and assembles them,
so the entry point's dependencies are visible here and the import arrows keep pointing down.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from types import ModuleType

from buraco_p2p import __version__, audit
from buraco_p2p.bots import selfplay
from buraco_p2p.net.mesh import commands
from buraco_p2p.play import botpeer, hostjoin, local, netselfplay
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
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="buraco-p2p",
        description="Peer-to-peer Buraco in the terminal: no server, cryptographically fair cards.",
    )
    parser.add_argument("--version", action="version", version=f"buraco-p2p {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in COMMAND_MODULES:
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
