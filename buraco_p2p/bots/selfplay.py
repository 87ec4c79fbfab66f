"""`buraco-p2p selfplay`, and the match `buraco-p2p play` prints without a terminal: whole
matches among bots in one process.

`selfplay` is reproducible: match k of seed N is dealt and played from a random source derived
from (N, k) alone, so any match of a run can be replayed by itself (the strong level searches
a fixed number of deals a move for that, unless `--bot-think` gives it a time instead). `play`
draws a fresh seed from the operating system, prints it, and plays one match of four bots of
its `--bot-level` exactly as `selfplay --seed N` would, so what was watched can be replayed
(the `play` subcommand itself lives with the full-screen client, `buraco_p2p.ui.command`).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any, TextIO

from buraco_p2p.bots import (
    BOT_NAMES,
    DEFAULT_LEVEL,
    DEFAULT_SAMPLES,
    LEVELS,
    Bot,
    HandRecord,
    MatchRecord,
    make_bot,
    play_match,
)
from buraco_p2p.crypto import DeterministicRandomSource
from buraco_p2p.engine import LINE_NAMES, EndReason, HandState, Move, match_sides
from buraco_p2p.logfile import encode_log
from buraco_p2p.net.channel.identity import Identity
from buraco_p2p.rules import RuleError, RuleSet, get_preset, parse_overrides
from buraco_p2p.session import Entry, Peer, Router, make_genesis

MAX_MATCHES = 100_000
MAX_THINK = 60.0
MAX_HANDS = 1_000
EXIT_USAGE = 2


class UsageError(ValueError):
    """A command-line argument the command cannot use (exit code 2)."""


def register(subparsers: Any) -> None:
    """Add the `selfplay` subcommand (see `buraco_p2p.cli`)."""
    sp = subparsers.add_parser(
        "selfplay",
        help="play whole matches among bots (one per seat) in one process",
        description=(
            "Play whole matches among bots, one per seat, in one process and print each hand's "
            "score lines and each match's result. The same seed gives the same games."
        ),
    )
    sp.add_argument(
        "--rules", metavar="PRESET", help="rule preset name (needed but with --network)"
    )
    sp.add_argument("--seed", required=True, type=int, metavar="N", help="seed of the deals")
    sp.add_argument("--matches", type=int, default=1, metavar="K", help="matches (default 1)")
    sp.add_argument("--json", action="store_true", help="print one JSON document")
    sp.add_argument(
        "--log",
        metavar="FILE",
        help=(
            "play one match among four in-memory session peers, all crypto on, and write "
            "its signed match log to FILE (check it with `buraco-p2p verify FILE`)"
        ),
    )
    sp.add_argument(
        "--hands", type=int, metavar="N", help="with --log: write only the first N hands"
    )
    sp.add_argument(
        "--bots",
        metavar="NAMES",
        help=(
            "comma-separated bot names: one for every seat, one per team (at four: team 0 is "
            "seats 0, 2 and team 1 seats 1, 3), or one per seat; "
            f"bots: {', '.join(BOT_NAMES)} (default: --bot-level)"
        ),
    )
    add_level_options(sp, "every seat's level")
    _add_rule_option(sp)
    _add_players_option(sp)
    add_minutes_option(sp)
    sp.set_defaults(func=run_selfplay, clock=time.monotonic)


def _add_rule_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--rule",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override one parameter of the preset (repeatable)",
    )


def _add_players_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--players",
        type=int,
        metavar="N",
        help="players at the table: 2, 3, 4 or 6 (the same as --rule players=N)",
    )


def add_level_options(p: argparse.ArgumentParser, what: str) -> None:
    """`--bot-level` and `--bot-think` (play, host --bots, selfplay; bot-peer has its own)."""
    p.add_argument(
        "--bot-level",
        choices=LEVELS,
        metavar="LEVEL",
        help=f"{what}: easy, normal or strong (default {DEFAULT_LEVEL})",
    )
    p.add_argument(
        "--bot-think",
        type=float,
        metavar="SECONDS",
        help="the strong level's time to think per move (default 1; selfplay: "
        f"{DEFAULT_SAMPLES} sampled deals a move, so that a seed repeats)",
    )


def check_think(think: float | None) -> None:
    """A `--bot-think` the bots can use; else a `UsageError`."""
    if think is not None and not 0 < think <= MAX_THINK:
        raise UsageError(f"--bot-think must be more than 0 and at most {MAX_THINK:g} seconds")


def add_minutes_option(p: argparse.ArgumentParser) -> None:
    """`--minutes M` (play, host, selfplay): a match of a fixed length in time."""
    p.add_argument(
        "--minutes",
        type=int,
        metavar="M",
        help=(
            "end the match with the hand in progress when M minutes are up; the side with "
            "the most points wins (the same as --rule minutes=M)"
        ),
    )


# ---------------------------------------------------------------------- argument checks

_WORDS = {1: "one", 2: "two", 3: "three", 4: "four", 6: "six"}


def resolve_rules(
    preset: str, overrides: Sequence[str], players: int | None = None, minutes: int | None = None
) -> RuleSet:
    """The preset with the `--rule` overrides (and `--players`, `--minutes`) applied; bad
    input is a `UsageError`."""
    try:
        rules = get_preset(preset)
        changes = parse_overrides(overrides)
        for key, value in (("players", players), ("minutes", minutes)):
            if value is None:
                continue
            if key in changes and changes[key] != value:
                raise UsageError(f"--{key} {value} and --rule {key}={changes[key]} disagree")
            changes[key] = value
        return rules.with_overrides(changes) if changes else rules
    except (RuleError, ValueError) as exc:
        raise UsageError(str(exc)) from None


def resolve_bots(
    spec: str, players: int = 4, sides: int = 2, think: float | None = None
) -> list[Bot]:
    """One bot per seat from a comma-separated list of one name (every seat), one per match
    side (seat s gets name s % sides) or one per seat. The strong level thinks `think`
    seconds a move, or searches a fixed number of deals (None: a seed repeats)."""
    names = [n.strip() for n in spec.split(",")]
    counts = sorted({1, sides, players})
    if len(names) not in counts or not all(names):
        words = [_WORDS[c] for c in counts]
        allowed = ", ".join(words[:-1]) + " or " + words[-1]
        raise UsageError(
            f"--bots needs {allowed} comma-separated names, not {spec!r} "
            f"(bots: {', '.join(BOT_NAMES)})"
        )
    try:
        bots = [make_bot(n, think) for n in names]
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    return [bots[s % len(bots)] for s in range(players)]


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
        if args.rules is None:
            raise UsageError("--rules PRESET is required")
        rules = resolve_rules(args.rules, args.rule, args.players, args.minutes)
        check_think(args.bot_think)
        if args.bots is not None and args.bot_level is not None:
            raise UsageError("--bots and --bot-level say the same thing: give one")
        args.bots = args.bots or args.bot_level or DEFAULT_LEVEL
        bots = resolve_bots(args.bots, rules.players, match_sides(rules), args.bot_think)
        if not 1 <= args.matches <= MAX_MATCHES:
            raise UsageError(f"--matches must be 1..{MAX_MATCHES}, not {args.matches}")
        if args.hands is not None and (args.log is None or not 1 <= args.hands <= MAX_HANDS):
            raise UsageError(f"--hands needs --log and a count of 1..{MAX_HANDS}")
        if args.log is not None and args.matches != 1:
            raise UsageError("--log plays one match")
    except UsageError as exc:
        return _usage("selfplay", exc)
    out = sys.stdout
    # Only a match with a time limit reads the clock (`args.clock`, which a test replaces).
    clock: Callable[[], float] | None = args.clock if rules.minutes else None
    if args.log is not None:
        return _selfplay_log(args, rules, bots, out)
    if args.json:
        # Keep only each match's summary document, not its move logs.
        docs = [
            match_document(k, play_match(rules, bots, match_rng(args.seed, k), clock=clock))
            for k in _range(args)
        ]
        json.dump(selfplay_document(rules, args.seed, bots, docs), out, indent=1)
        out.write("\n")
        return 0
    out.write(f"selfplay: rules {_rules_text(rules)}, seed {args.seed}, {_bots_text(bots)}\n")
    wins = [0] * match_sides(rules)
    unfinished = 0
    for k in _range(args):
        out.write(f"match {k} of {args.matches}\n")
        record = play_match(
            rules, bots, match_rng(args.seed, k), on_hand=_printer(out), clock=clock
        )
        _write_result(out, record)
        if record.winner is None:
            unfinished += 1
        else:
            wins[record.winner] += 1
    if args.matches > 1:
        out.write(
            ", ".join(f"{_match_side_name(rules, i)} won {w}" for i, w in enumerate(wins))
            + (f", {unfinished} unfinished" if unfinished else "")
            + f" of {args.matches} matches\n"
        )
    return 0


def _play(args: argparse.Namespace) -> int:
    try:
        rules = resolve_rules(args.rules, args.rule, args.players, args.minutes)
    except UsageError as exc:
        return _usage("play", exc)
    seed = getattr(args, "seed", None)
    if seed is None:
        seed = int.from_bytes(os.urandom(8), "big")
    level = getattr(args, "bot_level", None) or DEFAULT_LEVEL
    bots = resolve_bots(level, rules.players, match_sides(rules))
    out = sys.stdout
    overrides = "".join(f" --rule {r}" for r in args.rule)
    if level != DEFAULT_LEVEL:
        overrides += f" --bot-level {level}"
    if args.players is not None:
        overrides += f" --players {args.players}"
    if args.minutes is not None:
        overrides += f" --minutes {args.minutes}"
    out.write(
        f"{_WORDS[rules.players]} {level} bots, rules {_rules_text(rules)}, seed {seed}\n"
        f"(replay: buraco-p2p selfplay --rules {args.rules}{overrides} --seed {seed})\n"
    )
    out.flush()
    clock = getattr(args, "clock", time.monotonic) if rules.minutes else None
    record = play_match(rules, bots, match_rng(seed, 1), on_hand=_printer(out), clock=clock)
    _write_result(out, record)
    return 0


def session_match(
    rules: RuleSet,
    bots: Sequence[Bot],
    seed: int,
    hands: int | None = None,
    clock: Callable[[], float] | None = None,
) -> list[Entry]:
    """One match among in-memory session peers, all crypto on, each bot seeing only its
    own seat's view: the log (up to the end of hand `hands` if given), the same for every
    seed, as every peer holds it. A match with a time limit needs `clock` (seconds), which
    the peers read through the router between deliveries."""
    if rules.minutes and clock is None:
        raise ValueError("a match with a time limit (rule minutes) needs a clock")
    ident = [
        Identity.from_seed(_derive(seed, f"identity/{p}"), f"bot{p}") for p in range(rules.players)
    ]
    genesis = make_genesis(_derive(seed, "table")[:16], ident, rules)
    peers = [
        Peer(genesis, ident[p], DeterministicRandomSource(_derive(seed, f"peer/{p}")))
        for p in range(rules.players)
    ]
    rng = match_rng(seed, 1)

    def choose(party: int, view: HandState) -> Move:
        seat = peers[party].table.party_seat[party]
        return bots[seat].choose_move(view, rng)

    router = Router(peers, choose)
    start = clock() if clock is not None else 0.0
    router.start()
    first = peers[0]
    while router.queue:
        if clock is not None:
            router.now = max(router.now, clock() - start)
        router.run(1)
        hand = first.table.hand
        if hands is not None and hand is not None and hand.number >= hands:
            break
    log = list(first.log)
    if hands is not None:
        # cut at the first entry of hand `hands` (its keys round), if it has begun
        starts = [e.index for e in log if e.kind == "keys"][:: rules.players]
        if len(starts) > hands:
            log = log[: starts[hands]]
    elif not first.table.closed:
        raise RuntimeError("the session match did not finish")
    return log


def _derive(seed: int, what: str) -> bytes:
    return hashlib.sha256(f"buraco-p2p/selfplay-log/{seed}/{what}".encode()).digest()


def _selfplay_log(
    args: argparse.Namespace, rules: RuleSet, bots: Sequence[Bot], out: TextIO
) -> int:
    log = session_match(rules, bots, args.seed, args.hands, args.clock if rules.minutes else None)
    try:
        with open(args.log, "wb") as f:
            f.write(encode_log(e.wire for e in log))
    except OSError as exc:
        sys.stderr.write(f"selfplay: cannot write {args.log}: {exc}\n")
        return 1
    hands = sum(1 for e in log if e.kind == "result") // rules.players
    out.write(f"selfplay: wrote {len(log)} log entries ({hands} hands) to {args.log}\n")
    return 0


def _range(args: argparse.Namespace) -> range:
    return range(1, args.matches + 1)


def _usage(command: str, exc: Exception) -> int:
    sys.stderr.write(f"buraco-p2p {command}: error: {exc}\n")
    return EXIT_USAGE


# ---------------------------------------------------------------------- text output


def _rules_text(rules: RuleSet) -> str:
    shown = {k: v[1] for k, v in _plain_changes(rules, get_preset(rules.name)).items()}
    if rules.players == 6:
        # Two teams is the four-player value, so no change from the preset, but at six a choice.
        shown["teams"] = rules.teams
    if not shown:
        return rules.name
    return f"{rules.name} ({', '.join(f'{k}={v}' for k, v in shown.items())})"


def _bots_text(bots: Sequence[Bot]) -> str:
    return "bots " + ", ".join(f"seat {i} {b.name}" for i, b in enumerate(bots))


def _side_name(rules: RuleSet, seats: Sequence[int]) -> str:
    """A side of a hand: `team i` where sides are teams (four and six players), else its
    seats (`seat 1`, `seats 0+2` after the three-player change)."""
    if rules.players in (2, 3):
        return ("seat " if len(seats) == 1 else "seats ") + "+".join(map(str, seats))
    return f"team {min(seats) % match_sides(rules)}"


def _match_side_name(rules: RuleSet, i: int) -> str:
    return f"seat {i}" if rules.players in (2, 3) else f"team {i}"


def _match_side_seats(rules: RuleSet, i: int) -> list[int]:
    return list(range(i, rules.players, match_sides(rules)))


def _end_text(record: HandRecord) -> str:
    r = record.result
    if r.end_reason is EndReason.WENT_OUT and r.went_out is not None:
        rules = r.setup.rules
        if rules.players in (2, 3):
            return f"seat {r.went_out} went out"
        return f"seat {r.went_out} ({_side_name(rules, r.sides[r.side_of(r.went_out)])}) went out"
    return "the stock ran out"


def _row(name: str, values: Sequence[object], width: int) -> str:
    return f"    {name:<14}" + "".join(f"{v:>{width}}" for v in values)


def _printer(out: TextIO) -> Callable[[HandRecord, tuple[int, ...]], None]:
    def show(record: HandRecord, scores: tuple[int, ...]) -> None:
        s = record.setup
        rules = s.rules
        cut = "" if s.cut is None else f", cut {s.cut}"
        r = record.result
        change = ""
        if rules.players == 3 and len(r.sides) == 2:
            solo = next(side[0] for side in r.sides if len(side) == 1)
            change = f"; seat {solo} took the first pot and played alone"
        out.write(
            f"  hand {s.hand_number + 1}: dealer seat {s.dealer}{cut}, "
            f"{len(record.moves)} moves, {_end_text(record)}{change}\n"
        )
        sides = range(len(r.sides))
        width = 8 if rules.players == 4 else 11
        out.write(_row("", [_side_name(rules, side) for side in r.sides], width) + "\n")
        for name in LINE_NAMES:
            values = [r.line(i, name) for i in sides]
            if any(values):
                out.write(_row(name, values, width) + "\n")
        out.write(_row("hand total", list(r.totals), width) + "\n")
        if rules.players == 3:
            out.write(
                "    match score   "
                + ", ".join(f"seat {i} {x}" for i, x in enumerate(scores))
                + "\n"
            )
        else:
            out.write(_row("match score", list(scores), width) + "\n")
        out.flush()

    return show


def _write_result(out: TextIO, record: MatchRecord) -> None:
    scores = record.scores
    rules = record.rules
    n = len(record.hands)
    if record.winner is None:
        out.write(
            f"  result: unfinished after {n} hands, {' to '.join(map(str, scores))}\n"
        )
    else:
        w = record.winner
        seats = _match_side_seats(rules, w)
        who = _match_side_name(rules, w)
        if len(seats) > 1:
            who += f" (seats {', '.join(map(str, seats))})"
        others = " and ".join(str(x) for i, x in enumerate(scores) if i != w)
        out.write(f"  result: {who} wins {scores[w]} to {others} after {n} hands\n")
    out.flush()


# ---------------------------------------------------------------------- JSON output


def hand_document(record: HandRecord, scores: tuple[int, ...]) -> dict[str, Any]:
    """One hand: `lines` and `totals` per side of the hand (`sides`, seats each), `scores`
    per match side (teams at four and six, players at two and three)."""
    r = record.result
    s = record.setup
    return {
        "number": s.hand_number + 1,
        "dealer": s.dealer,
        "cut": s.cut,
        "moves": len(record.moves),
        "end": r.end_reason.value,
        "went_out": r.went_out,
        "sides": [list(side) for side in r.sides],
        "lines": {name: [r.line(i, name) for i in range(len(r.sides))] for name in LINE_NAMES},
        "totals": list(r.totals),
        "scores": list(scores),
    }


def match_document(index: int, record: MatchRecord) -> dict[str, Any]:
    hands = []
    running = [0] * len(record.scores)
    for h in record.hands:
        running = [x + y for x, y in zip(running, h.result.match_points, strict=True)]
        hands.append(hand_document(h, tuple(running)))
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
        "players": rules.players,
        "overrides": {k: v[1] for k, v in _plain_changes(rules, get_preset(rules.name)).items()},
        "seed": seed,
        "bots": [b.name for b in bots],
        "matches": list(matches),
        "summary": {
            "matches": len(matches),
            "wins": [winners.count(i) for i in range(match_sides(rules))],
            "unfinished": winners.count(None),
        },
    }


def _plain_changes(rules: RuleSet, base: RuleSet) -> dict[str, tuple[object, object]]:
    wire_new = rules.to_wire()
    wire_old = base.to_wire()
    return {k: (wire_old[k], wire_new[k]) for k in rules.changes_from(base)}
