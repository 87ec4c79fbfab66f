"""Network play timings: bot peer processes over real loopback links, all crypto on, printed
as one JSON object.

    python benchmarks/netplay.py [--players 4] [--rules classic] [--target 1000] [--seed 1]

One whole match (the preset with `target_score` lowered to `--target` so that it ends in a
few hands) among `--players` `bot-peer` processes, then a second table for the resume figure.
Every process stamps its events with CLOCK_MONOTONIC, which all processes on one machine
share.

- hand_setup_p50_s: per peer and hand, from applying the entry before the hand's keys round
  to applying the last entry of its deal round (keys, every shuffle made and verified, the
  deal's shares checked, own cards opened); the median.
- move_p50_ms / move_p99_ms: per move, from the mover's `play` to the moment the last other
  peer has applied the signed move entry.
- match_s: wall time of the whole match, process start to the last peer done.
- peak_rss_mb: the largest peak resident set size of any peer process.
- cpu_ms_per_entry: processor time (user and system) of a peer over the match, averaged over
  the peers, per log entry: the cost that the figures above multiply on a loaded machine.
- syncs_per_entry: log syncs (fdatasync) of a peer per log entry, averaged over the peers.
- resume_s: a peer is SIGKILLed in the middle of a hand and started again from its data
  directory; from the kill to its log holding every entry the host had at the moment of the
  kill (process start, log replay and catch-up from the peers included).
- catchup_s_after_120s_cut (`--cut 120`): four machines in the namespace lab
  (tests/netplay/netlab.py; needs root, `ip netns` and nftables, else `cut_skipped` says why);
  mid-match the last seat's cable is pulled for 120 s (the table waits for it) and plugged
  back; from the plug to its log holding every entry the others had at that moment.
  catchup_bytes: what crossed the switch to and from it meanwhile (frames, headers included).
  warning_lines: lines all the peers wrote on stderr (their warnings) over the match;
  repeated_warning_lines: those a peer had written before word for word (goal 0).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from buraco_p2p.logfile import decode_log
from buraco_p2p.play.cluster import Cluster


def _pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else float("nan")


def match(tmp: Path, players: int, rules: str, target: int, seed: int) -> dict[str, Any]:
    host_args = ["--rules", rules, "--players", str(players), "--rule", f"target_score={target}"]
    t0 = time.monotonic()
    with Cluster(players, tmp / "m", tmp, seed=seed, host_args=host_args, stats=True) as c:
        c.start()
        c.wait_done(1800)
        match_s = time.monotonic() - t0
        docs = [json.loads(c.stats_path(i).read_text()) for i in range(players)]
    setups: list[float] = []
    for d in docs:
        entries = d["applied"]
        at = {e[0]: e[3] for e in entries}
        kinds = [(e[0], e[1]) for e in entries]
        i = 0
        while i < len(kinds):
            if kinds[i][1] == "keys":
                start = at.get(kinds[i][0] - 1)
                j = i
                while j < len(kinds) and kinds[j][1] != "move":
                    j += 1
                end = at.get(kinds[j - 1][0])
                if start is not None and end is not None:
                    setups.append(end - start)
                i = j
            i += 1
    moves: list[float] = []
    for d in docs:
        for index, t_play in d["played"]:
            others = [
                o["applied"][index][3] for o in docs if o is not d and index < len(o["applied"])
            ]
            if others and all(x is not None for x in others):
                moves.append((max(others) - t_play) * 1000)
    return {
        "hand_setup_p50_s": round(statistics.median(setups), 3),
        "move_p50_ms": round(_pct(moves, 0.5), 2),
        "move_p99_ms": round(_pct(moves, 0.99), 2),
        "match_s": round(match_s, 1),
        "peak_rss_mb": round(max(d["rss_mb"] for d in docs), 1),
        "cpu_ms_per_entry": round(
            1000 * sum(d["cpu_s"] for d in docs) / len(docs) / len(docs[0]["applied"]), 2
        ),
        "syncs_per_entry": round(
            sum(d["syncs"] for d in docs) / len(docs) / len(docs[0]["applied"]), 2
        ),
        "hands": sum(1 for e in docs[0]["applied"] if e[1] == "keys") // players,
        "moves": len(moves),
        "entries": len(docs[0]["applied"]),
    }


def resume(tmp: Path, players: int, rules: str, seed: int) -> float:
    host_args = ["--rules", rules, "--players", str(players)]
    with Cluster(players, tmp / "r", None, seed=seed, hands=2, host_args=host_args) as c:
        c.start()
        victim = players - 1
        host_log = c.root / "peer-0" / "tables"
        # let the first hand get under way (past its deal) before the kill
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            c.poll(0.2)
            logs = list(host_log.glob("*/log"))
            if logs and len(decode_log(logs[0].read_bytes())) > 120:
                break
        t_kill = time.monotonic()
        c.kill(victim)
        have = len(decode_log(logs[0].read_bytes()))
        c.extra[victim] = ["--report-at", str(have)]
        c.resume(victim)
        reached = float(c.wait_line(victim, "reached", 120))
        c.wait_done(600)
    return reached - t_kill


def _entries(c: Cluster, i: int) -> int:
    logs = list((c.root / f"peer-{i}" / "tables").glob("*/log"))
    return len(decode_log(logs[0].read_bytes())) if logs else 0


def _switch_bytes(switch: Any, index: int) -> int:
    """Bytes the lab's switch has forwarded to or from machine `index`."""
    out = subprocess.run(
        ["ip", "netns", "exec", switch.inet, "nft", "-j", "list", "chain", "bridge", "lab",
         "seen"], capture_output=True, text=True, check=True,
    )  # fmt: skip
    total = 0
    for item in json.loads(out.stdout)["nftables"]:
        rule = item.get("rule")
        if rule is None or str(index) not in rule.get("comment", "").split(">"):
            continue
        total += sum(e["counter"]["bytes"] for e in rule["expr"] if "counter" in e)
    return total


def _warnings(c: Cluster) -> tuple[int, int]:
    """(lines the peers wrote on stderr, where their warnings go; of which repeats of a line
    the same peer wrote before)."""
    lines = repeats = 0
    for i in range(c.players):
        seen: set[str] = set()
        for line in (c.root / f"peer-{i}.stderr").read_text("utf-8", "replace").splitlines():
            if not line.strip():
                continue
            lines += 1
            repeats += line in seen
            seen.add(line)
    return lines, repeats


def cut(tmp: Path, players: int, rules: str, seed: int, cut_s: float) -> dict[str, Any]:
    """Mid-match, the last seat's cable is pulled for `cut_s` seconds and plugged back, in
    the namespace lab (tests/netplay/netlab.py); None figures where the lab cannot run."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "netplay"))
    from netlab import LabCluster, Switch, unavailable

    reason = unavailable()
    if reason is not None:
        return {"cut_skipped": reason}
    victim = players - 1
    # the table's timeout is longer than the cut: nobody proposes to void or end meanwhile
    host_args = ["--rules", rules, "--players", str(players),
                 "--timeout-ms", str(int((cut_s + 120) * 1000))]  # fmt: skip
    with Switch() as switch:
        machines = [switch.add_machine() for _ in range(players)]
        c = LabCluster(machines, tmp / "cut", None, seed=seed, hands=1, host_args=host_args)
        c.extra[0] = ["--report-at", "40"]
        with c:
            c.start()
            c.wait_line(0, "reached", 120)
            switch.unplug(machines[victim])
            deadline = time.monotonic() + cut_s
            while (left := deadline - time.monotonic()) > 0:
                c.poll(left)
            want = max(_entries(c, i) for i in range(players) if i != victim)
            before = _switch_bytes(switch, machines[victim].index)
            switch.plug(machines[victim])
            t_plug = time.monotonic()
            while _entries(c, victim) < want:
                if time.monotonic() - t_plug > 300:
                    raise TimeoutError("the peer that was cut off did not catch up in 300 s")
                c.poll(0.05)
            catchup_s = time.monotonic() - t_plug
            catchup_bytes = _switch_bytes(switch, machines[victim].index) - before
            c.wait_done(600)
        lines, repeats = _warnings(c)
    return {
        "cut_s": cut_s,
        "catchup_entries": want,
        f"catchup_s_after_{cut_s:g}s_cut": round(catchup_s, 2),
        "catchup_bytes": catchup_bytes,
        "warning_lines": lines,
        "repeated_warning_lines": repeats,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--players", type=int, default=4)
    ap.add_argument("--rules", default="classic")
    ap.add_argument("--target", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cut", type=float, default=120.0, metavar="S",
                    help="how long the cable is pulled (0: no cut figures)")
    ap.add_argument("--only-cut", action="store_true", help="the cut figures only")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="netplay-bench-") as d:
        out: dict[str, Any] = {}
        if not args.only_cut:
            out = match(Path(d), args.players, args.rules, args.target, args.seed)
            out["resume_s"] = round(resume(Path(d), args.players, args.rules, args.seed + 1), 2)
        if args.cut > 0:
            out.update(cut(Path(d), args.players, args.rules, args.seed + 2, args.cut))
    out.update(players=args.players, rules=args.rules, target_score=args.target)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
