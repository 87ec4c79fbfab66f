"""The `buraco-p2p` command line.

Each subcommand lives with the layer it drives (bots, net, ...) and registers itself
through a `register(subparsers)` function; this module only assembles them, so the
import arrows keep pointing down.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from buraco_p2p import __version__

# Modules that expose `register(subparsers: argparse._SubParsersAction) -> None`.
# Each registered parser sets `func=` to a callable taking the parsed namespace and
# returning an exit code.
COMMAND_MODULES: tuple[str, ...] = ("buraco_p2p.net.lobby", "buraco_p2p.bots.selfplay")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="buraco-p2p",
        description="Peer-to-peer Buraco in the terminal: no server, cryptographically fair cards.",
    )
    parser.add_argument("--version", action="version", version=f"buraco-p2p {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
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
