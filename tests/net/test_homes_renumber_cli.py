"""A cone host whose router renumbers mid-hand, with the real command line on every side.

Three homes of the namespace lab (natlab.py), each behind a cone NAT with no port mapping: the
host (`host --stun S1 --stun S2`) and two joiners (`join CODE --stun S1 --stun S2`), whose
reply codes the host's player pastes; every player is a person at the line client, playing by
drawing and discarding as asked (lineplay.py). Mid-hand the host's router restarts with a new
public address (`natlab.renumber`: address changed, connection tracking flushed). The host
prints a re-join code, each joiner's player pastes it once, ten seconds later, and the table
moves again within seconds: a move made after the renumbering shows at every seat, and nobody
waits for the host past the table's timeout. (Each joiner was by then punching toward the
host's old address, an attempt that lasts as long as a reply code may take to be pasted: the
pasted code now ends it.)

Skipped with the reason where namespaces or nftables are unavailable.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import trio
from lineplay import renumbered_table
from natlab import stun_lab, unavailable

REASON = unavailable()
pytestmark = [pytest.mark.netns, pytest.mark.skipif(REASON is not None, reason=REASON or "")]
# The table moves again this soon after the re-join code is pasted.
BACK_WITHIN = 15.0


# About 40 s of three line clients playing: among the slow tests (`benchmarks/internet.py`
# measures the same table: cone_host_renumber_gap_s, cone_host_back_after_paste_s).
@pytest.mark.slow
def test_a_renumbered_cone_host_is_back_within_seconds_of_one_pasted_rejoin_code(
    tmp_path: Path,
) -> None:
    with stun_lab() as lab:
        host, *joiners = (lab.add_home() for _ in range(3))
        seen = trio.run(renumbered_table, lab, host, joiners, tmp_path)
    assert seen.after_paste_s < BACK_WITHIN, seen
