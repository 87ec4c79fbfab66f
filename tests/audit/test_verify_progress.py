"""`replay_log(progress=...)`: how much of a log is settled while the audit runs, on one process
or several; never a bad entry, and all of a fair log in the end."""

from __future__ import annotations

import pytest
from test_verify_jobs import CHANGES, three_hands

from buraco_p2p.audit import verify_bytes
from buraco_p2p.logfile import encode_log
from buraco_p2p.verify_jobs import BadEntry, replay_log


def settled(wires: list[bytes], jobs: int) -> tuple[list[int], int | None]:
    """Every count told, and the position of the first bad entry (None: a fair log)."""
    told: list[int] = []
    try:
        replay_log(wires, jobs, pool_from=0, progress=told.append)
    except BadEntry as bad:
        return told, bad.position
    return told, None


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_fair_log_is_settled_bit_by_bit_to_its_end(jobs: int) -> None:
    wires = list(three_hands())
    told, bad = settled(wires, jobs)
    assert bad is None
    assert told == sorted(set(told)) and told[-1] == len(wires)
    assert len(told) > 3  # told as it goes, not only at the end
    assert told[0] < len(wires) // 3


@pytest.mark.parametrize("jobs", [1, 2])
@pytest.mark.parametrize("name", ["a shuffle, then a share proof two hands later",
                                  "a share proof in every hand",
                                  "a signature, then shares of every hand"])  # fmt: skip
def test_a_bad_log_is_settled_up_to_its_first_bad_entry_only(name: str, jobs: int) -> None:
    wires = list(three_hands())
    changed = [change(hand) for change, hand in CHANGES[name]]
    for index, wire in changed:
        wires[index] = wire
    first = min(index for index, _ in changed)
    told, bad = settled(wires, jobs)
    assert bad == first
    assert told == sorted(set(told)) and told[-1] == first


def test_verify_bytes_passes_the_progress_on() -> None:
    told: list[int] = []
    data = encode_log(three_hands())
    assert verify_bytes(data, jobs=2, progress=told.append).code == 0
    assert told[-1] == len(three_hands())
