"""One schedule run from its seed, its properties checked; and many, for a budget of time.

`run(seed)` builds the world a seed draws (`sim.world.Params.draw`), runs it event by event
with the checks after each (`sim.checks.Watch`), and returns what happened, or raises
`Failure` carrying the seed and the command that replays it. `explore` runs consecutive
seeds until a number of schedules or a time is spent.
"""

from __future__ import annotations

import itertools
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass

from buraco_p2p.session.states import Phase
from sim.checks import Violation, Watch
from sim.memo import remembered
from sim.seat import Stalled
from sim.world import Params, World, honest_table

__all__ = ["Failure", "Outcome", "explore", "replay_command", "run", "run_params"]

MAX_EVENTS = 400_000
# The honest tables schedules fork, by (seats, deal): built once per process.
_TABLES: dict[tuple[int, int], list[World]] = {}


def replay_command(seed: int, seats: int | None = None, hostile: str | None = None) -> str:
    extra = (f" --seats {seats}" if seats else "") + (f" --hostile {hostile}" if hostile else "")
    return f"python -m sim --seed {seed}{extra} --trace"


class Failure(AssertionError):
    """A schedule broke a property: the seed, the property, and how to replay it."""

    def __init__(self, seed: int, prop: str, what: str, command: str, trace: list[str]) -> None:
        super().__init__(f"schedule {seed} breaks {prop}: {what}\n  replay: {command}")
        self.seed = seed
        self.prop = prop
        self.trace = trace


@dataclass
class Outcome:
    """What one schedule did."""

    seed: int
    seats: int
    hostile: dict[int, str]
    events: int
    entries: list[int]
    closed: int
    voids: int
    rollbacks: int
    evidence: int


def run(
    seed: int,
    *,
    seats: int | None = None,
    hostile: str | None = None,
    audit: bool = True,
) -> Outcome:
    """The schedule `seed` draws (at `seats` seats, every hostile party playing `hostile`,
    where given), run and checked."""
    return run_params(Params.draw(seed, seats, hostile),
                      replay_command(seed, seats, hostile), audit=audit)  # fmt: skip


def run_params(params: Params, command: str, *, audit: bool = True) -> Outcome:
    """One schedule, given whole (a regression kept with its parameters), run and checked;
    `command` is what a failure says replays it."""
    seed = params.seed
    with remembered():
        key = (params.seats, params.deal)
        if key not in _TABLES:
            _TABLES[key] = honest_table(*key)
    world = _TABLES[key][params.stage].fork(params)
    watch = Watch(world)
    events = 0
    with remembered():
        try:
            while world.step():
                events += 1
                watch.after_event()
                if events > MAX_EVENTS:
                    raise Violation("L1", f"more than {MAX_EVENTS} events: the table never rests")
                if world.now > params.heal and _done(world, watch):
                    break
            watch.at_end(audit=audit)
        except Violation as v:
            raise Failure(seed, v.prop, str(v), command, world.trace) from None
        except Stalled as st:
            raise Failure(seed, "L1", str(st), command, world.trace) from None
        except Exception as exc:  # a crash of an honest peer or the verifier: L2
            where = "".join(traceback.format_exception(exc)[-6:])
            raise Failure(seed, "L2", f"{type(exc).__name__}: {exc}\n{where}", command,
                          world.trace) from None  # fmt: skip
    honest = [world.seats[p] for p in world.honest]
    return Outcome(
        seed=seed,
        seats=params.seats,
        hostile=params.hostile,
        events=events,
        entries=[len(s.files.log) for s in honest],
        closed=sum(1 for s in honest if s.peer is not None and s.peer.table.closed),
        voids=sum(len(s.peer.table.voids) for s in honest if s.peer is not None),
        rollbacks=sum(1 for s in honest for e in s.all_events if type(e).__name__ == "Voided"),
        evidence=sum(1 for s in honest for e in s.all_events
                     if type(e).__name__ in ("Fault", "Rewrite")),
    )


def _done(world: World, watch: Watch) -> bool:
    """Whether the run has shown what it can once the network healed: every honest peer is
    up, and its log has closed, reached the final round, or grown past where it stood when
    the network healed (the table moves on). Until then it runs, to its horizon at most."""
    logs = []
    for p in world.honest:
        peer = world.seats[p].peer
        if peer is None or p not in watch.healed_at:
            return False
        t = peer.table
        if not (t.closed or t.phase is Phase.FINAL
                or (len(t.log) > watch.healed_at[p] + 1 and t.voiding is None)):
            return False
        logs.append(peer.log)
    # and the honest logs are one log, nothing on its way that could change that
    logs.sort(key=len)
    if any(a[-1] != b[len(a) - 1] for a, b in itertools.pairwise(logs)):
        return False
    return not world.in_flight()


def explore(
    first: int, *, count: int | None = None, seconds: float | None = None,
    seats: int | None = None, hostile: str | None = None, audit: bool = True,
    step: int = 1, progress: Callable[[list[Outcome]], None] | None = None,
) -> list[Outcome]:  # fmt: skip
    """Run schedules `first`, `first + step`, ... until `count` of them or `seconds` are
    done; the first failure is raised (`Failure`). `progress` hears every hundredth."""
    start = time.monotonic()
    out: list[Outcome] = []
    seed = first
    while (count is None or len(out) < count) and (
        seconds is None or time.monotonic() - start < seconds
    ):
        out.append(run(seed, seats=seats, hostile=hostile, audit=audit))
        seed += step
        if progress is not None and len(out) % 100 == 0:
            progress(out)
    return out
