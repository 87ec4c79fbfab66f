"""`python -m sim`: run schedules of the adversarial simulator, or replay one by its seed.

    python -m sim --seed 1234 --trace            # one schedule, what happened in it
    python -m sim --seed 0 --count 1000 --jobs 2 # seeds 0..999 on two processes

It prints one JSON object (schedules, seconds, what they did); a schedule that breaks a
property prints the property, what was seen and the command that replays it, and exits 1.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from sim.schedule import Failure, Outcome, explore, run


def _summary(out: list[Outcome], spent: float) -> dict[str, Any]:
    return {
        "schedules": len(out),
        "seconds": round(spent, 2),
        "schedules_per_s": round(len(out) / spent, 2) if spent else None,
        "events": sum(o.events for o in out),
        "seats": {str(n): sum(1 for o in out if o.seats == n) for n in (2, 3, 4, 6)},
        "hostile": dict(sorted(_strategies(out).items())),
        "closed_logs": sum(o.closed for o in out),
        "voids": sum(o.voids for o in out),
        "evidence": sum(o.evidence for o in out),
    }


def _strategies(out: list[Outcome]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for o in out:
        for name in o.hostile.values():
            counts[name] = counts.get(name, 0) + 1
    return counts


def _worker(args: tuple[int, int, int | None, float | None, int | None, str | None, bool]) -> Any:
    first, step, count, seconds, seats, hostile, audit = args

    def progress(out: list[Outcome]) -> None:
        print(f"sim: {len(out)} schedules from seed {first} (every {step})", file=sys.stderr,
              flush=True)  # fmt: skip

    try:
        return explore(first, count=count, seconds=seconds, seats=seats, hostile=hostile,
                       audit=audit, step=step, progress=progress)  # fmt: skip
    except Failure as f:
        return (str(f), f.trace)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m sim", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=0, help="the first (or only) schedule's seed")
    ap.add_argument("--count", type=int, default=1, help="how many schedules, from --seed")
    ap.add_argument("--seconds", type=float, help="run schedules for this long instead")
    ap.add_argument("--jobs", type=int, default=1, help="processes to run them on")
    ap.add_argument("--seats", type=int, choices=(2, 3, 4, 6), help="every schedule at N seats")
    ap.add_argument("--hostile", help="every hostile party plays this strategy")
    ap.add_argument("--trace", action="store_true", help="print what happened (one schedule)")
    ap.add_argument("--no-audit", action="store_true", help="skip `verify` on the final logs")
    args = ap.parse_args(argv)
    start = time.monotonic()
    audit = not args.no_audit
    if args.trace:
        try:
            one = run(args.seed, seats=args.seats, hostile=args.hostile, audit=audit)
        except Failure as f:
            print("\n".join(f.trace[-300:]))
            print(f, file=sys.stderr)
            return 1
        print(json.dumps(_summary([one], time.monotonic() - start)))
        return 0
    jobs = max(1, args.jobs)
    count = None if args.seconds else args.count
    work = [(args.seed + k, jobs, None if count is None else (count - k + jobs - 1) // jobs,
             args.seconds, args.seats, args.hostile, audit) for k in range(jobs)]  # fmt: skip
    if jobs == 1:
        results = [_worker(work[0])]
    else:
        with ProcessPoolExecutor(jobs) as pool:
            results = list(pool.map(_worker, work))
    out: list[Outcome] = []
    failed = False
    for r in results:
        if isinstance(r, tuple):
            print(r[0], file=sys.stderr)
            failed = True
        else:
            out += r
    print(json.dumps(_summary(out, time.monotonic() - start)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
