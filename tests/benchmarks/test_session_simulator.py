"""The discrete-event simulator of benchmarks/session.py: each peer's CPU time goes on its own
timeline, messages arrive after the delay, a busy peer handles its next input when it is idle,
and legs are counted along what arrived last. Driven with a fake CPU clock, so nothing depends
on the machine's speed."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

import pytest

PATH = Path(__file__).resolve().parents[2] / "benchmarks" / "session.py"


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_session", PATH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_session"] = module
    spec.loader.exec_module(module)
    return module


class FakeClock:
    """CPU time that advances only by what the peer being handled says it costs."""

    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


class Echo:
    """Costs `cost` per input; on "go" sends "ping" to every other peer; on "ping" answers
    "pong" to peer 0."""

    def __init__(self, clock: FakeClock, cost: float) -> None:
        self.clock = clock
        self.cost = cost
        self.seen: list[tuple[float, object]] = []

    def handle(self, now: float, item: object) -> Sequence[tuple[int | None, object]]:
        self.seen.append((now, item))
        self.clock.t += self.cost
        if item == "go":
            return [(None, "ping")]
        if item == "ping":
            return [(0, "pong")]
        return []


def test_peers_work_in_parallel_and_messages_wait_for_the_delay(bench: ModuleType) -> None:
    clock = FakeClock()
    peers = [Echo(clock, 1.0) for _ in range(3)]
    sim = bench.Simulator(peers, 0.5, clock)
    sim.inject(0, "go")
    sim.run(100)
    # 0 handles "go" in [0, 1]; pings arrive at 1.5 at peers 1 and 2, which work at once in
    # parallel on their own machines, [1.5, 2.5]; the pongs arrive at 3.0 and queue at peer 0.
    assert peers[1].seen == [(1.5, "ping")] and peers[2].seen == [(1.5, "ping")]
    assert peers[0].seen == [(0.0, "go"), (3.0, "pong"), (4.0, "pong")]
    assert [line.cpu for line in sim.lines] == [3.0, 1.0, 1.0]
    assert sim.now == 5.0


def test_free_cpu_counts_legs(bench: ModuleType) -> None:
    clock = FakeClock()
    peers = [Echo(clock, 0.0) for _ in range(2)]
    sim = bench.Simulator(peers, 1.0, clock)
    sim.inject(0, "go")
    sim.run(100)
    assert peers[0].seen[-1] == (2.0, "pong")  # go -> ping -> pong: two legs


def test_a_run_that_never_settles_is_bounded(bench: ModuleType) -> None:
    class Loop:
        def handle(self, now: float, item: object) -> Sequence[tuple[int | None, object]]:
            return [(0, bench.Wake("again"))]

    sim = bench.Simulator([Loop()], 0.0, FakeClock())
    sim.inject(0, "go")
    with pytest.raises(RuntimeError, match="did not settle"):
        sim.run(50)


def test_percentile_is_nearest_rank(bench: ModuleType) -> None:
    values = [float(v) for v in range(1, 101)]
    assert bench.percentile(values, 0.5) == 50.0
    assert bench.percentile(values, 0.99) == 99.0
    assert bench.percentile([7.0], 0.99) == 7.0


def test_the_verify_figures_audit_a_timed_match_of_the_hands_asked(bench: ModuleType) -> None:
    out = bench.verify_figures("classic", 1)
    assert out["verify_exit"] == 0 and out["verify_match_hands"] == 1
    for key in ("verify_match_s", "verify_match_s_jobs1", "verify_match_s_jobs2"):
        assert out[key] > 0
    assert out["verify_match_cpu_s_jobs1"] > 0 and out["verify_jobs_default"] >= 1
    assert 0 < out["verify_match_idle_s_jobs2"] <= out["verify_match_cpu_s_jobs2"]
