"""Four machines, each a network namespace on one switch, play over real TCP through faults
made on the switch by nftables: lost segments, a partition between two machines, a pulled
cable (see netlab.py). Every peer ends with the same log and the audit accepts each copy.

Needs root, `ip netns` and nftables; skipped with the reason elsewhere.
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from buraco_p2p.audit import verify_path
from buraco_p2p.net.reach.invite import Invite

from .netlab import LabCluster, Machine, Switch, unavailable

REASON = unavailable()
pytestmark = [pytest.mark.netns, pytest.mark.skipif(REASON is not None, reason=REASON or "")]


@pytest.fixture
def lab() -> Iterator[tuple[Switch, list[Machine]]]:
    with Switch() as switch:
        yield switch, [switch.add_machine() for _ in range(4)]


def _same_logs_the_audit_accepts(c: LabCluster) -> bytes:
    logs = [c.log_path(i).read_bytes() for i in range(c.players)]
    assert all(log == logs[0] for log in logs), [len(log) for log in logs]
    for i in range(c.players):
        verdict = verify_path(str(c.log_path(i)), partial=c.hands is not None)
        assert verdict.code == 0, (i, verdict)
    return logs[0]


def test_four_machines_play_a_hand_over_the_switch(
    lab: tuple[Switch, list[Machine]], tmp_path: Path
) -> None:
    """The host on one machine, three joiners on three others dialling the invite's address."""
    switch, machines = lab
    with LabCluster(machines, tmp_path / "d", tmp_path, seed=31, hands=1) as c:
        c.start()
        invite = Invite.from_text(c.invite or "")
        assert [str(a.ip) for a in invite.addresses] == [machines[0].ip]
        c.wait_done(120)
    _same_logs_the_audit_accepts(c)
    crossed = switch.crossed()
    # every pair of machines talked straight through the switch, both ways
    assert len(crossed) == 12 and all(n > 0 for n in crossed.values()), crossed


def _drain(c: LabCluster, seconds: float) -> None:
    """Take in the peers' lines for `seconds` (a fault lasts that long; nothing waits on it)."""
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        c.poll(left)


def test_a_partition_and_a_pulled_cable_heal_to_identical_logs(
    lab: tuple[Switch, list[Machine]], tmp_path: Path
) -> None:
    """Mid-match, seat 3's cable is pulled for longer than a link's heartbeat timeout and
    plugged back; then seats 1 and 2 lose each other for as long (the rest of the table still
    reaches both). The whole match goes on and every copy of the log ends the same."""
    switch, machines = lab
    c = LabCluster(machines, tmp_path / "d", tmp_path, seed=32)
    c.extra[0] = ["--report-at", "40"]
    with c:
        c.start()
        c.wait_line(0, "reached", 60)
        assert not c.done
        switch.unplug(machines[3])
        before = switch.crossed()
        _drain(c, 6)
        during = switch.crossed()
        switch.plug(machines[3])
        cut = [k for k in before if 4 in k]
        assert all(during[k] == before[k] for k in cut), (before, during)
        assert not c.done, "the match ended before the partition began"
        switch.partition([machines[1]], [machines[2]])
        before = switch.crossed()
        _drain(c, 7)
        during = switch.crossed()
        dropped = switch.heal()
        assert dropped > 0
        assert during[(2, 3)] == before[(2, 3)] and during[(3, 2)] == before[(3, 2)]
        assert during[(1, 2)] > before[(1, 2)]  # the rest of the table still talked
        c.wait_done(300)
    _same_logs_the_audit_accepts(c)


def test_a_tenth_of_every_links_segments_lost_still_ends_in_identical_logs(
    lab: tuple[Switch, list[Machine]], tmp_path: Path
) -> None:
    """The switch drops one TCP segment in ten, from the first dial to the last entry: the
    senders retransmit, so the rest arrive late and out of order, handshakes included."""
    switch, machines = lab
    switch.lose(10)
    with LabCluster(machines, tmp_path / "d", tmp_path, seed=33, hands=1) as c:
        c.start(60)
        c.wait_done(180)
    assert switch.lost() > 0
    _same_logs_the_audit_accepts(c)


def _apply_fault(
    switch: Switch, machines: list[Machine], rnd: random.Random
) -> Callable[[], int]:
    """One random fault on the switch; returns what undoes it (a count of frames it cut)."""
    kind = rnd.choice(["split", "isolate", "cable"])
    shuffled = rnd.sample(machines, len(machines))
    if kind == "cable":
        victim = shuffled[0]
        switch.unplug(victim)

        def plug() -> int:
            switch.plug(victim)
            return 0

        return plug
    cut = 1 if kind == "isolate" else len(machines) // 2
    switch.partition(shuffled[:cut], shuffled[cut:])
    return switch.heal


@pytest.mark.slow
def test_whole_matches_through_loss_partitions_and_pulled_cables(
    lab: tuple[Switch, list[Machine]], tmp_path: Path
) -> None:
    """Three whole matches while the switch loses one TCP segment in twenty and, again and
    again, splits the table in two, isolates one machine (the host's too) or pulls a cable,
    each for a random 1 to 9 seconds. The seed of the faults is in the test's output."""
    switch, machines = lab
    fault_seed = int.from_bytes(os.urandom(4), "big")
    print(f"fault seed {fault_seed}")
    rnd = random.Random(fault_seed)
    switch.lose(5)
    everyone = set(range(len(machines)))
    faults = 0
    for seed in (34, 35, 36):
        where = tmp_path / f"match{seed}"
        with LabCluster(machines, where, where, seed=seed) as c:
            c.start(60)
            deadline = time.monotonic() + 900
            while not everyone <= c.done:
                assert time.monotonic() < deadline, f"not done after {faults} faults"
                _drain(c, rnd.uniform(0.5, 4))
                undo = _apply_fault(switch, machines, rnd)
                try:
                    _drain(c, rnd.uniform(1, 9))
                finally:
                    undo()
                faults += 1
            c.wait_done(60)
        _same_logs_the_audit_accepts(c)
    print(f"{faults} faults, {switch.lost()} segments lost")
    assert faults >= 5
