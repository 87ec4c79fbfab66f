"""TURN in the NAT lab: coturn in the internet namespace, homes behind cone and symmetric
NATs that no punch and no mapping connects, and tables that form through the relay anyway.

Each cell is a real table of three seats (host + two joiners) made by natlab's `mesh_table`
with the reach the commands give (`--stun` and `--turn`: natlab.Reach), a reply code pasted
at the host as soon as a joiner prints it; where it plays a hand, every home ends with the
same log."""

from __future__ import annotations

import contextlib
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from natlab import (
    TURN_PASSWORD,
    TURN_USER,
    Home,
    Lab,
    TableOutcome,
    lab_turn,
    mesh_table,
    stun_lab,
    stun_turn_reach,
    turn_unavailable,
    unavailable,
)

from buraco_p2p.net.reach.invite import Endpoint
from buraco_p2p.net.reach.turn import TurnServer

REASON = unavailable() or turn_unavailable()
pytestmark = pytest.mark.skipif(REASON is not None, reason=REASON or "")
VIA_TURN = "relayed (TURN 198.51.100.4)"


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Lab, Endpoint]]:
    with stun_lab() as made, lab_turn(made, tmp_path_factory.mktemp("coturn")) as turn:
        yield made, turn


def _same_hand(table: TableOutcome, seats: int) -> None:
    assert table.received == {i: sorted(set(table.received) - {i}) for i in table.received}
    entries = set(table.hand_entries.values())
    assert len(table.hand_entries) == seats and len(entries) == 1 and entries.pop() > 10
    assert len(set(table.hand_digests.values())) == 1  # every home holds the same log


def test_at_a_turn_table_every_cone_joiner_pair_stays_punched_for_the_whole_hand(
    lab: tuple[Lab, Endpoint], tmp_path: Path
) -> None:
    """A symmetric host reached through its TURN relay, three cone joiners, two of them with
    `--turn` of their own (so the host dials their relays, and their roster entries carry a
    relayed candidate): every joiner pair punches, and no relay, the host's or TURN's, ever
    takes its place while the hand is played."""
    made, turn = lab
    host = made.add_home(symmetric=True)
    joiners = [made.add_home() for _ in range(3)]
    servers = [TurnServer(TURN_USER, TURN_PASSWORD, turn)]
    reach = stun_turn_reach(made, servers, {j.index: servers for j in joiners[:2]})
    table = mesh_table([host, *joiners], reach=reach, hand_dir=tmp_path, timeout=240,
                       direct_wait=20.0)  # fmt: skip
    h = host.index
    for j in joiners:
        assert table.links[(j.index, h)] == table.links[(h, j.index)] == VIA_TURN, table.links
    said = "\n".join(reach.said[h])
    assert f"relayed address {TURN_V4_PREFIX}" in said, said
    pairs = [(a.index, b.index) for a in joiners for b in joiners if a is not b]
    for pair in pairs:
        assert table.history[pair] == ["direct (punched)"], (pair, table.history)
    _same_hand(table, 4)


def test_a_symmetric_joiner_at_a_cone_host_brings_its_own_relay(
    lab: tuple[Lab, Endpoint], tmp_path: Path
) -> None:
    made, turn = lab
    host, cone, sym = made.add_home(), made.add_home(), made.add_home(symmetric=True)
    reach = stun_turn_reach(made, [], {sym.index: [TurnServer(TURN_USER, TURN_PASSWORD, turn)]})

    down: list[bool] = []

    def cut(mesh: Any) -> None:
        # The host's path to the symmetric joiner's relay is cut for longer than a heartbeat
        # timeout: that link dies. The joiner cannot dial the host; it waits at its relay to
        # be dialed again, and the host dials it there until the link is back.
        member = next(m for m in mesh.roster.members if m.relayed())
        with _cut(host, member.relayed()[0]):
            time.sleep(CUT_S)
            down.append(not mesh.is_up(member.key))

    table = mesh_table([host, cone, sym], reach=reach, hand_dir=tmp_path, timeout=180,
                       direct_wait=20.0, interlude=cut)  # fmt: skip
    h, c, s = host.index, cone.index, sym.index
    assert table.links[(c, h)] == table.links[(h, c)] == "direct (punched)", table.links
    assert table.links[(s, h)] == table.links[(h, s)] == VIA_TURN, table.links
    # The pair cannot punch; the cone joiner dials the relayed candidate of the symmetric
    # one's greeting (docs/protocol.md 2.14, "Between two joiners").
    assert table.links[(c, s)] == table.links[(s, c)] == VIA_TURN, table.links
    assert down == [True]  # the cut took the link down; the table went on once it was back
    assert table.history[(h, s)][-1] == VIA_TURN, table.history[(h, s)]
    _same_hand(table, 3)


CUT_S = 8.0  # longer than a heartbeat timeout (5 s)


@contextlib.contextmanager
def _cut(home: Home, relayed: Endpoint) -> Iterator[None]:
    """`home`'s router drops every packet between `home` and the TURN relay address `relayed`
    while the block runs."""
    ip, port = str(relayed.ip), relayed.port
    rules = (f"table inet cut {{\n chain forward {{\n type filter hook forward priority -10;\n"
             f" ip daddr {ip} tcp dport {port} drop\n ip saddr {ip} tcp sport {port} drop\n"
             " }\n}\n")  # fmt: skip
    subprocess.run(["ip", "netns", "exec", home.router, "nft", "-f", "-"], input=rules,
                   text=True, check=True)  # fmt: skip
    try:
        yield
    finally:
        subprocess.run(["ip", "netns", "exec", home.router, "nft", "delete", "table", "inet",
                        "cut"], check=True)  # fmt: skip


def test_a_symmetric_host_and_symmetric_joiners_play_through_turn_and_the_host(
    lab: tuple[Lab, Endpoint], tmp_path: Path
) -> None:
    made, turn = lab
    homes = [made.add_home(symmetric=True) for _ in range(3)]
    reach = stun_turn_reach(made, [TurnServer(TURN_USER, TURN_PASSWORD, turn)], {})
    table = mesh_table(homes, reach=reach, hand_dir=tmp_path, timeout=180, direct_wait=1.0)
    h, j, k = (home.index for home in homes)
    for joiner in (j, k):
        assert table.links[(joiner, h)] == table.links[(h, joiner)] == VIA_TURN, table.links
    assert table.links[(j, k)] == table.links[(k, j)] == "relayed by the host", table.links
    _same_hand(table, 3)


def test_turn_servers_that_fail_are_one_line_each_and_the_table_goes_on(
    lab: tuple[Lab, Endpoint], tmp_path: Path
) -> None:
    made, turn = lab
    homes = [made.add_home() for _ in range(3)]
    wrong = TurnServer(TURN_USER, "not-the-password", turn)
    nobody = TurnServer(TURN_USER, TURN_PASSWORD, Endpoint.parse("192.0.2.1", 3479))
    with lab_turn(made, tmp_path / "no-tcp", ip="198.51.100.6", tcp_relay=False) as udp_only:
        refusing = TurnServer(TURN_USER, TURN_PASSWORD, udp_only)
        reach = stun_turn_reach(made, [wrong, nobody, refusing], {})
        table = mesh_table(homes, reach=reach, timeout=120, direct_wait=20.0)
    h, j, k = (home.index for home in homes)
    for a, b in ((j, h), (h, j), (k, h), (h, k), (j, k), (k, j)):
        assert table.links[(a, b)] == "direct (punched)", table.links
    lines = [line for line in reach.said[h] if line.startswith("* no TURN relay")]
    assert len(lines) == 3, reach.said[h]
    assert lines[0] == (f"* no TURN relay: TURN server {turn}: refused the user name or "
                        "password (401 Unauthorized)"), lines  # fmt: skip
    assert lines[1].startswith("* no TURN relay: TURN server 192.0.2.1:3479: cannot be "
                               "reached: "), lines  # fmt: skip
    assert "unreachable" in lines[1] or "No route" in lines[1], lines
    assert lines[2] == (f"* no TURN relay: TURN server {udp_only}: refuses TCP allocations "
                        "(442 TCP Transport is not allowed by the TURN Server "
                        "configuration)"), lines  # fmt: skip


TURN_V4_PREFIX = "198.51.100.4:"
