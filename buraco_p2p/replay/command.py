"""`buraco-p2p replay LOG`: a finished match watched again, every hand face up, move by move.

On a terminal the replay is full screen (`FullScreen`, handed in by `buraco_p2p.cli`: the
interface lives above this layer); `--line`, or no terminal, writes the story as text
(`buraco_p2p.replay.line`). Either way the log is `verify`'s: it is audited as `verify` audits
it (`--jobs` as there), and only what it finds good is shown; a log it refuses is replayed up
to its first bad entry, named in `verify`'s words. A file that is not a match log (missing,
truncated, another program's) is one line on standard error and exit code 2, as for `verify`;
so are a seat or a hand the log does not have. `--line` ends with `verify`'s exit code; the
full screen with 0 once the viewer quits.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from buraco_p2p.audit import (
    EXIT_NOT_A_LOG,
    NotALog,
    closed_pipe_is_quiet,
    read_bounded,
    render_text,
    verify_bytes,
)
from buraco_p2p.logfile import LogFileError, decode_log
from buraco_p2p.replay.line import write_story
from buraco_p2p.replay.record import Walker
from buraco_p2p.replay.telling import FACE_UP
from buraco_p2p.replay.timeline import Timeline
from buraco_p2p.session import LogError
from buraco_p2p.text.glyphs import Glyphs
from buraco_p2p.verify_jobs import parse_jobs

__all__ = ["FullScreen", "Opened", "register"]


@dataclass(frozen=True, slots=True)
class Opened:
    """A log read and its first entry accepted, with what the command line asked."""

    path: str
    name: str
    data: bytes
    timeline: Timeline
    seat: int  # FACE_UP or a seat
    party: int | None  # a player named by nickname: their seat, once the seats are drawn
    deal: int  # the deal to open at, from 0
    jobs: int
    ascii: bool


FullScreen = Callable[[Opened], int]
EXIT_INTERRUPTED = 130  # as a shell reports a command stopped by Ctrl-C


class Usage(Exception):
    """A command line the log cannot answer (exit 2): the reason in one line."""


def register(subparsers: Any, full_screen: FullScreen | None = None) -> None:
    """Add the `replay` subcommand (see `buraco_p2p.cli`)."""
    rp = subparsers.add_parser(
        "replay",
        help="watch a finished match again, every hand face up, move by move",
        description=(
            "Step through a match log as the table showed it: every hand face up, or as one "
            "seat saw it; every move in the table's words; each hand's score and the score's "
            "story. The log is audited as `verify` audits it, and shown only as far as it is "
            "found good. Full screen on a terminal (? lists the keys); --line writes it as text."
        ),
    )
    rp.add_argument("logfile", metavar="LOG", help="the match log (as saved or `selfplay --log`)")
    rp.add_argument(
        "--seat", metavar="N", help="as seat N saw it (a seat as `verify` lists it, or a nickname)"
    )
    rp.add_argument("--hand", type=int, metavar="K", help="hand K (the K-th deal, from 1)")
    rp.add_argument("--line", action="store_true", help="write the match as plain text")
    rp.add_argument("--ascii", action="store_true", help="letters for suits (S H D C), # bars")
    rp.add_argument("--jobs", metavar="N", help="check the proofs on N processes (as verify)")
    rp.set_defaults(func=lambda args: run_replay(args, full_screen))


def run_replay(args: argparse.Namespace, full_screen: FullScreen | None) -> int:
    try:
        return _run(args, full_screen)
    except KeyboardInterrupt:  # Ctrl-C while the log is read or audited: stop, quietly
        return EXIT_INTERRUPTED


def _run(args: argparse.Namespace, full_screen: FullScreen | None) -> int:
    try:
        opened = open_log(args)
    except Usage as exc:
        _say(f"buraco-p2p replay: {exc}")
        return EXIT_NOT_A_LOG
    except LogError:  # the first entry is no genesis: verify's own words, and its code
        verdict = verify_bytes(read_bounded(args.logfile), name=args.logfile)
        _say(render_text(verdict.doc).rstrip("\n"))
        return verdict.code
    if full_screen is not None and not args.line and sys.stdin.isatty() and sys.stdout.isatty():
        return full_screen(opened)
    return write_line(opened, args.hand)


def _say(text: str) -> None:
    sys.stderr.write((text.splitlines()[0] if text else "") + "\n")


def open_log(args: argparse.Namespace) -> Opened:
    """Read the log and its first entry; check the command line against it. `Usage` for a
    file that is not a match log or an option it cannot answer; `LogError` for a first entry
    that is no genesis."""
    try:
        jobs = parse_jobs(args.jobs)
    except ValueError as exc:
        raise Usage(str(exc)) from None
    path = args.logfile
    try:
        data = read_bounded(path)
        wires = decode_log(data)
    except NotALog as exc:
        raise Usage(f"not a match log: {exc}") from None
    except LogFileError as exc:
        raise Usage(f"not a match log: {path}: {exc}") from None
    walker = Walker(wires)
    rules = walker.rules
    seat, party = (FACE_UP, None) if args.seat is None else _seat(
        args.seat, walker.terms.nicknames, rules.players
    )  # fmt: skip
    if args.hand is not None and args.hand < 1:
        raise Usage(f"--hand counts deals from 1, not {args.hand}")
    glyphs = Glyphs(ascii=args.ascii, deck_size=rules.deck_size)
    name = os.path.basename(path) or path
    deal = (args.hand or 1) - 1
    tl = Timeline(walker, glyphs)
    return Opened(path, name, data, tl, seat, party, deal, jobs, args.ascii)


def _seat(text: str, nicknames: Sequence[str], players: int) -> tuple[int, int | None]:
    """A seat by its number (0 .. players - 1, as `verify` lists them), or a player by
    nickname: their party, seated by the log's own seat draw (`Walker.seat_of`)."""
    if text.isdigit():
        seat = int(text)
        if seat >= players:
            raise Usage(f"--seat {seat}: this table has seats 0 to {players - 1}")
        return seat, None
    matches = [p for p, nick in enumerate(nicknames) if nick == text]
    if len(matches) != 1:
        raise Usage(f"--seat {text!r}: no player by that nickname (or more than one)")
    return FACE_UP, matches[0]


def check_now(opened: Opened) -> None:
    """Audit the whole log here (as `verify` does) and walk what it finds good."""
    tl = opened.timeline
    verdict = verify_bytes(opened.data, name=opened.path, jobs=opened.jobs)
    good = len(tl.walker.wires)
    if verdict.doc.get("result") in ("bad_entry", "verifier_failed"):
        good = int(verdict.doc.get("index") or 0)
    tl.settle(good)
    tl.advance()
    tl.conclude(verdict.code, verdict.doc)


def write_line(opened: Opened, hand: int | None) -> int:
    """`--line`: the match as text on standard output; `verify`'s exit code."""
    check_now(opened)
    tl = opened.timeline
    if hand is not None and tl.first_of(hand - 1) is None:
        _say(f"buraco-p2p replay: --hand {hand}: the log holds {len(tl.walker.hands)} deals")
        return EXIT_NOT_A_LOG
    cols = shutil.get_terminal_size((80, 24)).columns if sys.stdout.isatty() else 80
    with closed_pipe_is_quiet():
        seat = opened.seat if opened.party is None else tl.walker.seat_of(opened.party)
        write_story(tl, sys.stdout, seat=seat,
                    deal=None if hand is None else hand - 1, cols=min(cols, 100))  # fmt: skip
        sys.stdout.flush()
    return tl.code if tl.code is not None else 0
