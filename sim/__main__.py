"""`python -m sim`: run schedules of the adversarial simulator, or replay one by its seed."""

from __future__ import annotations

import argparse
import json
import sys
import time

from sim.schedule import Failure, explore, run


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m sim", description=__doc__)
    ap.add_argument("--seed", type=int, default=0, help="the first (or only) schedule's seed")
    ap.add_argument("--count", type=int, default=1, help="how many schedules, from --seed")
    ap.add_argument("--seconds", type=float, help="run schedules for this long instead")
    ap.add_argument("--seats", type=int, choices=(2, 3, 4, 6), help="every schedule at N seats")
    ap.add_argument("--hostile", help="every hostile party plays this strategy")
    ap.add_argument("--trace", action="store_true", help="print what happened (one schedule)")
    ap.add_argument("--no-audit", action="store_true", help="skip `verify` on the final logs")
    args = ap.parse_args(argv)
    start = time.monotonic()
    try:
        if args.trace:
            out = [run(args.seed, seats=args.seats, hostile=args.hostile,
                       audit=not args.no_audit)]  # fmt: skip
        else:
            out = explore(args.seed, count=None if args.seconds else args.count,
                          seconds=args.seconds, seats=args.seats, hostile=args.hostile,
                          audit=not args.no_audit)  # fmt: skip
    except Failure as f:
        if args.trace:
            print("\n".join(f.trace[-300:]))
        print(f, file=sys.stderr)
        return 1
    spent = time.monotonic() - start
    print(json.dumps({
        "schedules": len(out), "seconds": round(spent, 2),
        "schedules_per_s": round(len(out) / spent, 2) if spent else None,
        "events": sum(o.events for o in out),
        "closed_logs": sum(o.closed for o in out), "voids": sum(o.voids for o in out),
        "evidence": sum(o.evidence for o in out),
        "hostile": sorted({s for o in out for s in o.hostile.values()}),
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
