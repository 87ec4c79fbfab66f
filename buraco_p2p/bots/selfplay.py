"""`buraco-p2p selfplay`, and the match `buraco-p2p play` prints without a terminal: whole
matches among bots in one process.

`selfplay` is reproducible: match k of seed N is dealt and played from a random source derived
from (N, k) alone, so any match of a run can be replayed by itself. `play` draws a fresh seed
from the operating system, prints it, and plays one match of four heuristic bots exactly as
`selfplay --seed N` would, so what was watched can be replayed (the `play` subcommand itself
lives with the full-screen client, `buraco_p2p.ui.command`).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
from collections.abc import Callable, Sequence
from typing import Any, TextIO

from buraco_p2p.bots import BOT_NAMES, Bot, HandRecord, MatchRecord, make_bot, play_match
from buraco_p2p.engine import LINE_NAMES, EndReason
from buraco_p2p.rules import RuleError, RuleSet, get_preset, parse_overrides

MAX_MATCHES = 100_000
EXIT_USAGE = 2


class UsageError(ValueError):
    """A command-line argument the command cannot use (exit code 2)."""


def register(subparsers: Any) -> None:
    """Add the `selfplay` subcommand (see `buraco_p2p.cli`)."""
    sp = subparsers.add_parser(
        "selfplay",
        help="play whole matches among four bots in one process",
        description=(
            "Play whole matches among four bots in one process and print each hand's score "
            "lines and each match's result. The same seed gives the same games."
        ),
    )
    sp.add_argument("--rules", required=True, metavar="PRESET", help="rule preset name")
    sp.add_argument("--seed", required=True, type=int, metavar="N", help="seed of the deals")
    sp.add_argument("--matches", type=int, default=1, metavar="K", help="matches (default 1)")
    sp.add_argument("--json", action="store_true", help="print one JSON document")
    sp.add_argument(
        "--bots",
        default="heuristic",
        metavar="NAMES",
        help=(
            "comma-separated bot names: one for every seat, two for team 0 (seats 0, 2) and "
            f"team 1 (seats 1, 3), or four, one per seat; bots: {', '.join(BOT_NAMES)}"
        ),
    )
    _add_rule_option(sp)
    sp.set_defaults(func=run_selfplay)


def _add_rule_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--rule",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override one parameter of the preset (repeatable)",
    )


# ---------------------------------------------------------------------- argument checks


def resolve_rules(preset: str, overrides: Sequence[str]) -> RuleSet:
    """The preset with the `--rule` overrides applied; bad input is a `UsageError`."""
    try:
        rules = get_preset(preset)
        changes = parse_overrides(overrides)
        return rules.with_overrides(changes) if changes else rules
    except (RuleError, ValueError) as exc:
        raise UsageError(str(exc)) from None


def resolve_bots(spec: str) -> list[Bot]:
    """Four bots, by seat, from a comma-separated list of one, two or four names."""
    names = [n.strip() for n in spec.split(",")]
    if len(names) not in (1, 2, 4) or not all(names):
        raise UsageError(
            f"--bots needs one, two or four comma-separated names, not {spec!r} "
            f"(bots: {', '.join(BOT_NAMES)})"
        )
    try:
        bots = [make_bot(n) for n in names]
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if len(bots) == 1:
        return bots * 4
    if len(bots) == 2:
        return [bots[0], bots[1], bots[0], bots[1]]
    return bots


def match_rng(seed: int, index: int) -> random.Random:
    """The random source of match `index` (1-based) of a run with `seed`."""
    return random.Random(f"buraco-p2p/selfplay/{seed}/{index}")


# ---------------------------------------------------------------------- commands


def run_selfplay(args: argparse.Namespace) -> int:
    return _guard_pipe(_selfplay, args)


def run_play(args: argparse.Namespace) -> int:
    return _guard_pipe(_play, args)


def _guard_pipe(command: Callable[[argparse.Namespace], int], args: argparse.Namespace) -> int:
    """Run a command whose reader may go away (`| head`): stop quietly, as `cat` would."""
    try:
        return command(args)
    except BrokenPipeError:
        # Python would complain again flushing stdout at exit; point it at /dev/null.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1


def _selfplay(args: argparse.Namespace) -> int:
    try:
        rules = resolve_rules(args.rules, args.rule)
        bots = resolve_bots(args.bots)
        if not 1 <= args.matches <= MAX_MATCHES:
            raise UsageError(f"--matches must be 1..{MAX_MATCHES}, not {args.matches}")
    except UsageError as exc:
        return _usage("selfplay", exc)
    out = sys.stdout
    if args.json:
        # Keep only each match's summary document, not its move logs.
        docs = [
            match_document(k, play_match(rules, bots, match_rng(args.seed, k)))
            for k in _range(args)
        ]
        json.dump(selfplay_document(rules, args.seed, bots, docs), out, indent=1)
        out.write("\n")
        return 0
    out.write(f"selfplay: rules {_rules_text(rules)}, seed {args.seed}, {_bots_text(bots)}\n")
    wins = [0, 0]
    unfinished = 0
    for k in _range(args):
        out.write(f"match {k} of {args.matches}\n")
        record = play_match(rules, bots, match_rng(args.seed, k), on_hand=_printer(out))
        _write_result(out, record)
        if record.winner is None:
            unfinished += 1
        else:
            wins[record.winner] += 1
    if args.matches > 1:
        out.write(
            f"team 0 won {wins[0]}, team 1 won {wins[1]}"
            + (f", {unfinished} unfinished" if unfinished else "")
            + f" of {args.matches} matches\n"
        )
    return 0


def _play(args: argparse.Namespace) -> int:
    try:
        rules = resolve_rules(args.rules, args.rule)
    except UsageError as exc:
        return _usage("play", exc)
    seed = getattr(args, "seed", None)
    if seed is None:
        seed = int.from_bytes(os.urandom(8), "big")
    bots = resolve_bots("heuristic")
    out = sys.stdout
    overrides = "".join(f" --rule {r}" for r in args.rule)
    out.write(
        f"four heuristic bots, rules {_rules_text(rules)}, seed {seed}\n"
        f"(replay: buraco-p2p selfplay --rules {args.rules}{overrides} --seed {seed})\n"
    )
    out.flush()
    record = play_match(rules, bots, match_rng(seed, 1), on_hand=_printer(out))
    _write_result(out, record)
    return 0


def _range(args: argparse.Namespace) -> range:
    return range(1, args.matches + 1)


def _usage(command: str, exc: Exception) -> int:
    sys.stderr.write(f"buraco-p2p {command}: error: {exc}\n")
    return EXIT_USAGE


# ---------------------------------------------------------------------- text output


def _rules_text(rules: RuleSet) -> str:
    changes = _plain_changes(rules, get_preset(rules.name))
    if not changes:
        return rules.name
    return f"{rules.name} ({', '.join(f'{k}={v[1]}' for k, v in changes.items())})"


def _bots_text(bots: Sequence[Bot]) -> str:
    return "bots " + ", ".join(f"seat {i} {b.name}" for i, b in enumerate(bots))


def _end_text(record: HandRecord) -> str:
    r = record.result
    if r.end_reason is EndReason.WENT_OUT and r.went_out is not None:
        return f"seat {r.went_out} (team {r.went_out & 1}) went out"
    return "the stock ran out"


def _printer(out: TextIO) -> Callable[[HandRecord, tuple[int, int]], None]:
    def show(record: HandRecord, scores: tuple[int, int]) -> None:
        s = record.setup
        cut = "" if s.cut is None else f", cut {s.cut}"
        out.write(
            f"  hand {s.hand_number + 1}: dealer seat {s.dealer}{cut}, "
            f"{len(record.moves)} moves, {_end_text(record)}\n"
        )
        out.write(f"    {'':<14}{'team 0':>8}{'team 1':>8}\n")
        r = record.result
        for name in LINE_NAMES:
            a, b = r.line(0, name), r.line(1, name)
            if a or b:
                out.write(f"    {name:<14}{a:>8}{b:>8}\n")
        a, b = r.totals
        out.write(f"    {'hand total':<14}{a:>8}{b:>8}\n")
        out.write(f"    {'match score':<14}{scores[0]:>8}{scores[1]:>8}\n")
        out.flush()

    return show


def _write_result(out: TextIO, record: MatchRecord) -> None:
    a, b = record.scores
    n = len(record.hands)
    if record.winner is None:
        out.write(f"  result: unfinished after {n} hands, {a} to {b}\n")
    else:
        w = record.winner
        out.write(
            f"  result: team {w} (seats {w}, {w + 2}) wins {record.scores[w]} to "
            f"{record.scores[1 - w]} after {n} hands\n"
        )
    out.flush()


# ---------------------------------------------------------------------- JSON output


def hand_document(record: HandRecord, scores: tuple[int, int]) -> dict[str, Any]:
    r = record.result
    s = record.setup
    return {
        "number": s.hand_number + 1,
        "dealer": s.dealer,
        "cut": s.cut,
        "moves": len(record.moves),
        "end": r.end_reason.value,
        "went_out": r.went_out,
        "lines": {name: [r.line(0, name), r.line(1, name)] for name in LINE_NAMES},
        "totals": list(r.totals),
        "scores": list(scores),
    }


def match_document(index: int, record: MatchRecord) -> dict[str, Any]:
    hands = []
    running = [0, 0]
    for h in record.hands:
        a, b = h.result.totals
        running = [running[0] + a, running[1] + b]
        hands.append(hand_document(h, (running[0], running[1])))
    return {
        "match": index,
        "first_dealer": record.first_dealer,
        "hands": hands,
        "scores": list(record.scores),
        "winner": record.winner,
    }


def selfplay_document(
    rules: RuleSet, seed: int, bots: Sequence[Bot], matches: Sequence[dict[str, Any]]
) -> dict[str, Any]:
    """The `--json` output: every hand's lines and every match's result (`match_document`),
    and a summary."""
    winners = [m["winner"] for m in matches]
    return {
        "rules": rules.name,
        "overrides": {k: v[1] for k, v in _plain_changes(rules, get_preset(rules.name)).items()},
        "seed": seed,
        "bots": [b.name for b in bots],
        "matches": list(matches),
        "summary": {
            "matches": len(matches),
            "wins": [winners.count(0), winners.count(1)],
            "unfinished": winners.count(None),
        },
    }


def _plain_changes(rules: RuleSet, base: RuleSet) -> dict[str, tuple[object, object]]:
    wire_new = rules.to_wire()
    wire_old = base.to_wire()
    return {k: (wire_old[k], wire_new[k]) for k in rules.changes_from(base)}
