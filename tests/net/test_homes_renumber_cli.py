"""A cone host whose router renumbers mid-hand, with the real command line on both sides.

Two homes of the namespace lab (natlab.py), each behind a cone NAT with no port mapping: the
host (`host --stun S1 --stun S2`) and a joiner (`join CODE --stun S1 --stun S2`), whose reply
code the host's player pastes; both players are people at the line client, each playing by
drawing and discarding (lineplay.py). Mid-hand the host's router restarts with a new public
address (`natlab.renumber`: address changed, connection tracking flushed). The host prints a
re-join code, the joiner's player pastes it once, ten seconds later, and the table moves
again within seconds: a move is played after the paste, and nobody waits for the host past
the table's timeout. (The joiner was by then punching toward the host's old address, an
attempt that lasts as long as a reply code may take to be pasted: the pasted code now ends
it.)

Skipped with the reason where namespaces or nftables are unavailable.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import trio
from lineplay import renumbered_table_gap
from natlab import stun_lab, unavailable

REASON = unavailable()
pytestmark = [pytest.mark.netns, pytest.mark.skipif(REASON is not None, reason=REASON or "")]
# The table moves again this soon after the re-join code is pasted (the bound).
BACK_WITHIN = 15.0


# About 30 s of two line clients playing: among the slow tests (`benchmarks/internet.py` measures
# the same cell as cone_host_renumber_gap_s).
@pytest.mark.slow
def test_a_renumbered_cone_host_is_back_within_seconds_of_one_pasted_rejoin_code(
    tmp_path: Path,
) -> None:
    with stun_lab() as lab:
        host, *joiners = (lab.add_home() for _ in range(2))
        back = trio.run(renumbered_table_gap, lab, host, joiners, tmp_path)
    assert back < BACK_WITHIN, back
