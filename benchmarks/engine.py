"""Speed of the rules engine and strength of the bots, printed as one JSON object.

    python benchmarks/engine.py [--matches N] [--hands N] [--seed N]

- selfplay_hands_per_s: complete hands per second with four heuristic bots, each deciding from
  its own view (legal-move generation, the bot's choice, and the move applied on the referee
  and the four player views with their reveals), the five presets in turn.
- replay_moves_per_s: the logs of those hands replayed with full validation on one core: every
  move decoded from its wire form and pushed on a fresh referee view of its hand, starting
  with an empty meld cache.
- selfplay_hands_per_s_6p: the same at a table of six (three teams of two, 162 cards), six
  heuristic bots, the five presets in turn.
- heuristic_vs_random_win_rate: matches won by a team of two heuristic bots against two random
  bots (seats alternated from match to match, the five presets in turn), over `--matches`
  matches (default 200); an unfinished match counts as a loss.

Targets (issue "rules engine"): replay >= 20,000 moves/s, self-play >= 20 hands/s,
win rate > 0.9; (issue "tables of two, three and six"): self-play at six >= 20 hands/s.
Each speed is also given per second of this process's CPU time (`*_per_cpu_s*`), which a
loaded machine disturbs less than wall time; `load_avg_1m` and `cpus` say how loaded it was.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import time
from typing import Any

from buraco_p2p.bots import HandRecord, HeuristicBot, RandomBot, play_match
from buraco_p2p.bots.base import Bot
from buraco_p2p.engine import RefereeView, move_from_wire
from buraco_p2p.engine.oracle import clear_public_melds
from buraco_p2p.rules import PRESETS, get_preset, parse_overrides

PRESET_NAMES = tuple(PRESETS)


def bench_selfplay(
    hands: int, seed: int
) -> tuple[float, float, list[HandRecord], dict[str, float]]:
    """Seconds (wall and CPU) to play at least `hands` complete hands (whole matches, presets
    in turn), the hands, and hands per second by preset."""
    bot = HeuristicBot()
    bots: list[Bot] = [bot, bot, bot, bot]
    records: list[HandRecord] = []
    per_preset = {name: [0, 0.0] for name in PRESET_NAMES}
    i = 0
    c0 = time.process_time()
    t0 = time.perf_counter()
    while len(records) < hands:
        name = PRESET_NAMES[i % len(PRESET_NAMES)]
        t = time.perf_counter()
        played = play_match(get_preset(name), bots, random.Random(seed + i)).hands
        per_preset[name][0] += len(played)
        per_preset[name][1] += time.perf_counter() - t
        records.extend(played)
        i += 1
    elapsed = time.perf_counter() - t0
    cpu = time.process_time() - c0
    rates = {k: round(n / dt, 1) for k, (n, dt) in per_preset.items() if n}
    return elapsed, cpu, records, rates


def bench_selfplay_6p(hands: int, seed: int) -> tuple[float, float, int, dict[str, float]]:
    """Seconds (wall and CPU) to play at least `hands` complete hands at a table of six
    (whole matches, presets in turn), the hands played, and hands per second by preset."""
    bot = HeuristicBot()
    bots: list[Bot] = [bot] * 6
    played = 0
    per_preset = {name: [0, 0.0] for name in PRESET_NAMES}
    i = 0
    c0 = time.process_time()
    t0 = time.perf_counter()
    while played < hands:
        name = PRESET_NAMES[i % len(PRESET_NAMES)]
        rules = get_preset(name).with_overrides(parse_overrides(["players=6"]))
        t = time.perf_counter()
        n = len(play_match(rules, bots, random.Random(seed + 500_000 + i)).hands)
        per_preset[name][0] += n
        per_preset[name][1] += time.perf_counter() - t
        played += n
        i += 1
    elapsed = time.perf_counter() - t0
    cpu = time.process_time() - c0
    rates = {k: round(n / dt, 1) for k, (n, dt) in per_preset.items() if n}
    return elapsed, cpu, played, rates


def bench_replay(records: list[HandRecord]) -> tuple[float, float, int]:
    """Seconds (wall and CPU) to decode and push every move of every recorded hand on a fresh
    referee, and the number of moves."""
    wires = [(r.setup, r.permutation, [m.to_wire() for m in r.moves]) for r in records]
    moves = sum(len(w) for _, _, w in wires)
    # Each fresh view starts cold, like a peer verifying a log: no meld checks memoised.
    clear_public_melds()
    gc.collect()  # and without the previous stage's garbage to collect on the clock
    c0 = time.process_time()
    t0 = time.perf_counter()
    for setup, perm, log in wires:
        view = RefereeView(setup, perm)
        for wire in log:
            view.push(move_from_wire(wire))
        if not view.ended:
            raise AssertionError("a recorded hand did not end on replay")
    return time.perf_counter() - t0, time.process_time() - c0, moves


def bench_strength(matches: int, seed: int) -> dict[str, Any]:
    heuristic, rand = HeuristicBot(), RandomBot()
    wins = 0
    unfinished = 0
    per_preset: dict[str, list[int]] = {name: [0, 0] for name in PRESET_NAMES}
    t0 = time.perf_counter()
    for i in range(matches):
        name = PRESET_NAMES[i % len(PRESET_NAMES)]
        team = (i // len(PRESET_NAMES)) % 2
        pair: list[Bot] = [heuristic, rand] if team == 0 else [rand, heuristic]
        record = play_match(get_preset(name), pair * 2, random.Random(seed + 1_000_000 + i))
        per_preset[name][1] += 1
        if record.winner == team:
            wins += 1
            per_preset[name][0] += 1
        elif record.winner is None:
            unfinished += 1
    return {
        "heuristic_vs_random_win_rate": wins / matches,
        "matches": matches,
        "heuristic_wins": wins,
        "unfinished_matches": unfinished,
        "win_rate_by_preset": {k: w / n for k, (w, n) in per_preset.items() if n},
        "strength_elapsed_s": round(time.perf_counter() - t0, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--matches", type=int, default=200, help="heuristic vs random matches (0: skip)"
    )
    parser.add_argument("--hands", type=int, default=100, help="self-play hands at least")
    parser.add_argument("--hands-6p", type=int, default=40, help="six-player hands at least")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    t_start = time.perf_counter()
    selfplay_s, selfplay_cpu, records, by_preset = bench_selfplay(args.hands, args.seed)
    replay_s, replay_cpu, moves = bench_replay(records)
    six_s, six_cpu, six_hands, six_by_preset = bench_selfplay_6p(args.hands_6p, args.seed)
    strength = bench_strength(args.matches, args.seed) if args.matches > 0 else {}
    out: dict[str, Any] = {
        "replay_moves_per_s": round(moves / replay_s),
        "replay_moves_per_cpu_s": round(moves / replay_cpu),
        "replay_moves": moves,
        "selfplay_hands_per_s": round(len(records) / selfplay_s, 1),
        "selfplay_hands_per_cpu_s": round(len(records) / selfplay_cpu, 1),
        "selfplay_hands": len(records),
        "selfplay_hands_per_s_by_preset": by_preset,
        "selfplay_elapsed_s": round(selfplay_s, 2),
        "selfplay_hands_per_s_6p": round(six_hands / six_s, 1),
        "selfplay_hands_per_cpu_s_6p": round(six_hands / six_cpu, 1),
        "selfplay_hands_6p": six_hands,
        "selfplay_hands_per_s_6p_by_preset": six_by_preset,
        **strength,
        "elapsed_s": round(time.perf_counter() - t_start, 2),
        # The machine's load when the run ended: wall-time figures mean little above ~1 a core.
        "load_avg_1m": round(os.getloadavg()[0], 2),
        "cpus": os.cpu_count(),
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
