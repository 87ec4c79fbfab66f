"""Options `play` and `host` share beside `--rules`, `--rule`, `--players` and `--minutes`."""

from __future__ import annotations

import argparse

__all__ = ["add_hands_option", "hands_rule"]


def add_hands_option(parser: argparse.ArgumentParser) -> None:
    """`--hands N`: a match of N hands, the side ahead winning (as `--rule hands=N`)."""
    parser.add_argument(
        "--hands", type=int, metavar="N",
        help="a match of N hands, the side ahead after the last winning (as --rule hands=N)",
    )  # fmt: skip


def hands_rule(args: argparse.Namespace) -> list[str]:
    """The `--rule` overrides, `--hands` among them (checked with the others)."""
    hands = getattr(args, "hands", None)
    return [*args.rule, f"hands={hands}"] if hands is not None else list(args.rule)
