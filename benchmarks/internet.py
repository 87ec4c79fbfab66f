"""Links behind real NATs in the namespace lab (tests/net/natlab.py), as one JSON object.

    python benchmarks/internet.py [--tries N]

Needs root, `ip netns` and nftables; prints {"skipped": reason} elsewhere.

- direct_links_cone: of the 6 links between four homes behind cone NATs (`masquerade`), how
  many were punched and carried the handshake (goal 6).
- direct_links_one_symmetric: the same with one home behind `masquerade fully-random`
  (goal 3: its three links cannot be punched and stay on the relay).
- links_up_s_cone: from the first STUN request to all 6 links handshaken, four cone homes.
- table_up_s_cone: invite to four seated with every link up, through the mesh; null while
  the mesh does not yet punch (its links to peers behind NATs go through the host's relay).
- punch_success_rate: of `--tries` punches (default 50) between two cone NATs, each with a
  fresh local port, STUN probe and handshake, the share that succeeded (goal >= 0.98);
  punch_ms_p50 / punch_ms_p90: time of one such punch, probe to handshaken link.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "net"))

from natlab import Lab, punch_all, stun_responder, unavailable


def _with_stun(lab: Lab) -> tuple[threading.Event, Any]:
    stop = threading.Event()
    return stop, stun_responder(lab, stop)


def measure(tries: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    with Lab() as lab:
        stop, stun = _with_stun(lab)
        try:
            homes = [lab.add_home() for _ in range(4)]
            start = time.perf_counter()
            links = punch_all(lab, homes, 41000)
            out["links_up_s_cone"] = round(time.perf_counter() - start, 3)
            out["direct_links_cone"] = sum(how == "direct" for how in links.values())
            out["table_up_s_cone"] = None
        finally:
            stop.set()
            stun.join(10)
    with Lab() as lab:
        stop, stun = _with_stun(lab)
        try:
            homes = [lab.add_home(symmetric=k == 3) for k in range(4)]
            links = punch_all(lab, homes, 41000, window=1.5)
            out["direct_links_one_symmetric"] = sum(how == "direct" for how in links.values())
        finally:
            stop.set()
            stun.join(10)
    with Lab() as lab:
        stop, stun = _with_stun(lab)
        try:
            pair = [lab.add_home(), lab.add_home()]
            ok, times, failures = 0, [], []
            for k in range(tries):
                start = time.perf_counter()
                links = punch_all(lab, pair, 42000 + k)
                how = links.get((1, 2), "no result")
                if how == "direct":
                    ok += 1
                    times.append((time.perf_counter() - start) * 1000)
                else:
                    failures.append(how)
            out["punch_success_rate"] = round(ok / tries, 3)
            out["punch_tries"] = tries
            if times:
                out["punch_ms_p50"] = round(statistics.median(times), 1)
                out["punch_ms_p90"] = round(statistics.quantiles(times, n=10)[-1], 1)
            out["punch_failures"] = failures[:3]
        finally:
            stop.set()
            stun.join(10)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tries", type=int, default=50)
    args = parser.parse_args()
    reason = unavailable()
    if reason is not None:
        print(json.dumps({"skipped": reason}))
        return
    print(json.dumps(measure(max(2, min(args.tries, 500)))))


if __name__ == "__main__":
    main()
