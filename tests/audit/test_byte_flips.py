"""Changing any single byte of a fair match log makes `buraco-p2p verify` refuse it."""

from __future__ import annotations

import pytest
from audit_helpers import match_log
from flips import _try, flipped, record_bounds, uncaught
from hypothesis import given, settings
from hypothesis import strategies as st

from buraco_p2p.audit import EXIT_FAIR, verify_bytes
from buraco_p2p.logfile import decode_log
from buraco_p2p.session import Table, decode_entry

SIZE = len(match_log())


@st.composite
def positions(draw: st.DrawFn) -> tuple[int, int]:
    """A byte anywhere in the file, or (so that the many small entries after the shuffles get
    their share) a byte of a record chosen uniformly among the records."""
    if draw(st.booleans()):
        pos = draw(st.integers(0, SIZE - 1))
    else:
        bounds = record_bounds(match_log())
        start, end = bounds[draw(st.integers(0, len(bounds) - 1))]
        pos = draw(st.integers(start, end - 1))
    return pos, draw(st.integers(1, 255))


@settings(max_examples=4)
@given(st.lists(positions(), min_size=40, max_size=40, unique_by=lambda f: f[0]))
def test_any_changed_byte_is_refused(flips: list[tuple[int, int]]) -> None:
    assert uncaught(match_log(), flips) == []


def test_the_command_itself_refuses_a_changed_byte() -> None:
    data = match_log()
    assert verify_bytes(data).code == EXIT_FAIR
    for pos in (SIZE // 3, SIZE - 1):
        assert verify_bytes(flipped(data, pos, 0x01)).code != EXIT_FAIR


def test_the_sweep_would_report_an_entry_accepted() -> None:
    """The harness is not vacuous: the unchanged entry in its place is reported as accepted."""
    data = match_log()
    wires = decode_log(data)
    table = Table(decode_entry(wires[0]))
    assert _try(table, wires, 1, data) == "entry 1 accepted with a changed byte"


@pytest.mark.slow
def test_every_byte_of_a_log_flipped_is_refused() -> None:
    data = match_log()
    assert uncaught(data, ((pos, 0x01) for pos in range(SIZE))) == []
