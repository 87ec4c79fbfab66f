"""Strength and speed of the bot levels, printed as one JSON object.

    python benchmarks/bots.py [--deals N] [--baseline-deals N] [--samples S] [--quick]

Every strength figure comes from duplicate deals (`buraco_p2p.bots.duel`): each deal is played
twice, the two players swapping sides, and the figure is a mean over deals with its 95%
confidence interval over deals. A hand is won by the side with more points (a tie is half).

- strong_vs_normal_hand_win_rate, strong_vs_normal_points_per_hand: the strong level against
  the normal level, at four seats under `us` (teams of two) and at two seats under `italian`,
  over 2 x `--deals` hands each, the search at a fixed size (`strong_samples` deals a searched
  move; playouts of `strong_horizon_turns` turns after a draw, per table, and of
  `strong_discard_horizon_turns` after a discard, where the normal level's discard is
  weighed against its `strong_discards` next cheapest), so the figures do not depend on how
  loaded the machine is; `strong_samples_at_default_budget` says how many
  deals the default budget reaches here (at most `strong_samples_cap`, where a budgeted
  search stops anyway), which the fixed size must not exceed.
- normal_vs_baseline_hand_win_rate, normal_vs_baseline_points_per_hand: the normal level
  against the frozen baseline (the "heuristic" player from before the levels), the same two
  tables, over 2 x `--baseline-deals` hands each; easy_vs_normal_*: the easy level against
  the normal level, four seats.
- pile_takes_without_meld_within_2_turns: per level, the share of its pile takes after which
  the taker laid down or added nothing in that turn and its next (with the counts), from the
  duels above.
- strong_move_ms_p95: the strong level's time per move at the default budget, as a bot peer
  runs it (its deals shared among this machine's processors), over every move of the hands
  played for it (`strong_searched_move_ms_p95`: over the moves it searched);
  normal_move_ms_p95: the normal level's, from its duel against the baseline.

Goals (issue "bots worth sitting with"): strong_vs_normal_hand_win_rate >= 0.60 with the
points difference's interval above 0; normal_vs_baseline_hand_win_rate >= 0.55; the normal
level's pile_takes_without_meld below the baseline's; strong_move_ms_p95 <= 1000 at the
default budget of 1 s; normal_move_ms_p95 <= 20. The duels run in parallel on every
processor; the whole run within 20 minutes on a two-core machine.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import time
from collections.abc import Callable, Sequence
from typing import Any

from buraco_p2p.bots import EasyBot, HeuristicBot, NormalBot, StrongBot
from buraco_p2p.bots.base import Bot
from buraco_p2p.bots.duel import DuelResult, HandPlay, PileTakes, play_deal
from buraco_p2p.bots.strong import (
    DEFAULT_DISCARD_HORIZON,
    DEFAULT_DISCARDS,
    DEFAULT_HEADS_UP_HORIZON,
    DEFAULT_HORIZON,
    DEFAULT_SAMPLES,
    DEFAULT_THINK,
    MAX_SAMPLES,
    cores,
)
from buraco_p2p.rules import RuleSet, get_preset

TABLES = {"us_4": ("us", 4), "italian_2": ("italian", 2)}
SEED = 32


def rules_of(table: str) -> RuleSet:
    preset, players = TABLES[table]
    rules = get_preset(preset)
    return rules if players == 4 else rules.with_overrides({"players": players})


def maker(level: str, samples: int) -> Callable[[], Bot]:
    if level == "strong":
        return lambda: StrongBot(think=None, samples=samples)
    return {"normal": NormalBot, "easy": EasyBot, "baseline": HeuristicBot}[level]


Task = tuple[str, str, str, int, int]  # table, level A, level B, deal, samples


def play_task(task: Task) -> tuple[Task, tuple[HandPlay, HandPlay]]:
    table, a, b, deal, samples = task
    return task, play_deal(rules_of(table), maker(a, samples), maker(b, samples), SEED, deal)


def run_duels(tasks: Sequence[Task], processes: int) -> dict[tuple[str, str, str], DuelResult]:
    """Every deal of every duel, spread over `processes` (the slow ones first), each duel's
    deals put back in order so the figures do not depend on which process finished first."""
    played: dict[tuple[str, str, str], list[tuple[int, tuple[HandPlay, HandPlay]]]] = {}
    ordered = sorted(tasks, key=lambda t: t[1] != "strong")
    with multiprocessing.get_context("forkserver").Pool(processes) as pool:
        for task, pair in pool.imap_unordered(play_task, ordered):
            played.setdefault(task[:3], []).append((task[3], pair))
    return {key: DuelResult([pair for _, pair in sorted(deals)]) for key, deals in played.items()}


def figure(mean_ci: tuple[float, float, float], hands: int, digits: int) -> dict[str, Any]:
    m, lo, hi = mean_ci
    return {"value": round(m, digits), "ci95": [round(lo, digits), round(hi, digits)],
            "hands": hands}  # fmt: skip


def p95_ms(seconds: Sequence[float]) -> float:
    xs = sorted(seconds)
    return round(1000 * xs[min(len(xs) - 1, int(0.95 * len(xs)))], 2) if xs else float("nan")


def _piles(duels: dict[tuple[str, str, str], DuelResult], a: str, b: str, side: int) -> PileTakes:
    """The pile takes of side `side` (0: `a`, 1: `b`) over every table's `a` vs `b` duel."""
    out = PileTakes()
    for (_, x, y), result in duels.items():
        if (x, y) == (a, b):
            out.add(result.piles(side))
    return out


def piles(p: PileTakes) -> dict[str, Any]:
    return {"rate": round(p.rate, 4), "takes": p.takes, "without_meld": p.without_meld}


def strong_at_budget(hands: int) -> dict[str, Any]:
    """Strong bots at the default budget, as a bot peer runs them (deals shared among this
    machine's processors, no cap on their number), against normal ones, at both tables."""
    from buraco_p2p.engine import HandSetup, LocalTable, match_sides, random_permutation

    bot = StrongBot(think=DEFAULT_THINK, workers=cores())
    normal = NormalBot()
    every: list[float] = []
    searched: list[float] = []
    samples: dict[str, list[int]] = {}
    try:
        for table in TABLES:
            rules = rules_of(table)
            n = rules.players
            reached = samples.setdefault(table, [])
            for h in range(hands):
                rng = random.Random(f"budget/{table}/{h}")
                setup = HandSetup(rules, rng.randrange(n), (0,) * match_sides(rules))
                game = LocalTable(setup, random_permutation(rules, rng))
                seat_rngs = [random.Random(rng.getrandbits(64)) for _ in range(n)]
                while not game.ended:
                    seat = game.referee.turn
                    view = game.views[seat]
                    if seat % 2:
                        game.push(normal.choose_move(view, seat_rngs[seat]))
                        continue
                    t0 = time.monotonic()
                    move = bot.choose_move(view, seat_rngs[seat])
                    dt = time.monotonic() - t0
                    every.append(dt)
                    if bot.last.seconds:
                        searched.append(dt)
                        reached.append(bot.last.samples)
                    game.push(move)
    finally:
        bot.close()
    return {
        "strong_move_ms_p95": p95_ms(every),
        "strong_searched_move_ms_p95": p95_ms(searched),
        "strong_searched_move_ms_max": round(1000 * max(searched, default=0.0), 2),
        "strong_moves_timed": len(every),
        "strong_moves_searched": len(searched),
        "strong_samples_at_default_budget": {
            table: {"median": _quantile(xs, 0.5), "p10": _quantile(xs, 0.1)}
            for table, xs in samples.items()
        },
        "strong_workers": cores(),
    }


def _quantile(xs: list[int], q: float) -> int:
    ys = sorted(xs)
    return ys[int(q * (len(ys) - 1))] if ys else 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--deals", type=int, default=150, help="strong vs normal deals per table")
    ap.add_argument("--baseline-deals", type=int, default=300, help="normal vs baseline deals")
    ap.add_argument("--samples", type=int, default=DEFAULT_SAMPLES, help="deals a search")
    ap.add_argument("--budget-hands", type=int, default=2, help="hands timed at the budget")
    ap.add_argument("--quick", action="store_true", help="a smoke run: a few deals of each")
    args = ap.parse_args()
    if args.quick:
        args.deals, args.baseline_deals, args.budget_hands = 2, 4, 1
    t0 = time.monotonic()
    doc: dict[str, Any] = {"seed": SEED, "cpus": cores()}
    doc.update(strong_at_budget(args.budget_hands))
    tasks: list[Task] = []
    for table in TABLES:
        tasks += [(table, "strong", "normal", d, args.samples) for d in range(args.deals)]
        tasks += [(table, "normal", "baseline", d, 0) for d in range(args.baseline_deals)]
    tasks += [("us_4", "easy", "normal", d, 0) for d in range(args.baseline_deals // 2)]
    duels = run_duels(tasks, cores())
    doc["strong_samples"] = args.samples
    doc["strong_horizon_turns"] = {"us_4": DEFAULT_HORIZON, "italian_2": DEFAULT_HEADS_UP_HORIZON}
    doc["strong_discards"] = DEFAULT_DISCARDS
    doc["strong_discard_horizon_turns"] = DEFAULT_DISCARD_HORIZON
    doc["strong_samples_cap"] = MAX_SAMPLES
    for (table, a, b), result in sorted(duels.items()):
        key = f"{a}_vs_{b}"
        doc.setdefault(f"{key}_hand_win_rate", {})[table] = figure(
            result.win_rate(), result.hands, 3
        )
        doc.setdefault(f"{key}_points_per_hand", {})[table] = figure(
            result.point_difference(), result.hands, 1
        )
    takes = {
        "baseline": _piles(duels, "normal", "baseline", 1),
        "easy": _piles(duels, "easy", "normal", 0),
        "normal": _piles(duels, "normal", "baseline", 0),
        "strong": _piles(duels, "strong", "normal", 0),
    }
    doc["pile_takes_without_meld_within_2_turns"] = {lv: piles(p) for lv, p in takes.items()}
    normal_times = [t for (_, a, _), r in duels.items() if a == "normal" for t in r.move_seconds(0)]
    doc["normal_move_ms_p95"] = p95_ms(normal_times)
    doc["seconds"] = round(time.monotonic() - t0, 1)
    doc["load_avg_1m"] = round(os.getloadavg()[0], 2)
    print(json.dumps(doc, indent=1))


if __name__ == "__main__":
    main()
