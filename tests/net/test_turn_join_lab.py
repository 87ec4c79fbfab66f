"""A joiner's own TURN relay for the other joiners (docs/protocol.md 2.6, 2.14), with the real
coturn in the NAT lab: a joiner behind a symmetric NAT, whose punch to a cone joiner cannot
work, lists its relayed address last in its greeting; the host passes it on in the roster;
the relay holder permits where the host sees the other joiner (the punch record) and the
other joiner dials the relayed candidate, so that pair plays through TURN, not the host."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from natlab import (
    TURN_PASSWORD,
    TURN_USER,
    Home,
    Lab,
    Reach,
    lab_turn,
    mesh_table,
    stun_lab,
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


def _mapped_host_and_turn_joiner(turned: int, servers: list[TurnServer]) -> Reach:
    """`host --internet` (its router maps the port: no reply code is needed) and `join
    [--turn ...]` (for home `turned` only)."""
    from buraco_p2p.net.mesh.turning import keep_relay
    from buraco_p2p.net.reach.candidates import CandidateKind
    from buraco_p2p.net.reach.portmap import map_port

    async def host(mesh: Any, port: int, say: Callable[[str], None]) -> None:
        mapping = await map_port(port)
        mesh.advertise_also(mapping.external, CandidateKind.MAPPED)

    async def joiner(
        home: Home, mesh: Any, port: int, invite: Any, say: Callable[[str], None]
    ) -> None:
        if home.index == turned:
            await mesh.nursery.start(
                functools.partial(keep_relay, advertise=False), mesh, servers, say
            )

    return Reach(host, joiner)


@pytest.mark.parametrize("sym_seat", [1, 2], ids=["relay in the lower seat", "in the higher"])
def test_a_symmetric_joiner_relays_its_pair_through_its_turn_server_not_the_host(
    lab: tuple[Lab, Endpoint], tmp_path: Path, sym_seat: int
) -> None:
    # Seat 1 holding the relay: seat 2 dials it, as any dialer of 2.7 would (after its
    # punch failed). Seat 2 holding it: seat 1, which dials nobody, dials it all the same.
    made, turn = lab
    host = made.add_home()
    if sym_seat == 1:
        sym, cone = made.add_home(symmetric=True), made.add_home()
        homes = [host, sym, cone]
    else:
        cone, sym = made.add_home(), made.add_home(symmetric=True)
        homes = [host, cone, sym]
    reach = _mapped_host_and_turn_joiner(sym.index, [TurnServer(TURN_USER, TURN_PASSWORD, turn)])
    table = mesh_table(homes, reach=reach, hand_dir=tmp_path, timeout=180,
                       direct_wait=30.0)  # fmt: skip
    h, s, c = host.index, sym.index, cone.index
    # The joiner dials the port the host's router maps; both ends call the link "mapped".
    assert table.links[(s, h)] == table.links[(h, s)] == "mapped", table.links
    assert table.links[(c, s)] == table.links[(s, c)] == VIA_TURN, table.links
    said = "\n".join(reach.said[s])
    assert "relayed address 198.51.100.4:" in said and "refus" not in said, said
    assert table.received == {i: sorted({h, s, c} - {i}) for i in (h, s, c)}
    entries = set(table.hand_entries.values())
    assert len(table.hand_entries) == 3 and len(entries) == 1 and entries.pop() > 10
    assert len(set(table.hand_digests.values())) == 1  # every home holds the same log


@pytest.mark.slow  # the pair must outlast the punch and the dial (about 17 s)
def test_a_joiner_lying_about_a_relayed_candidate_only_keeps_its_pair_on_the_host_relay(
    lab: tuple[Lab, Endpoint], tmp_path: Path
) -> None:
    # A joiner greets with a "relayed" address where no TURN server lends anything: the other
    # joiner dials it once the punch failed, nothing answers, and the pair plays through the
    # host as before. The lie costs only the liar's own link.
    from buraco_p2p.net.reach.candidates import CandidateKind

    made, _ = lab
    host, sym, cone = made.add_home(), made.add_home(symmetric=True), made.add_home()
    honest = _mapped_host_and_turn_joiner(sym.index, [])

    async def liar(home: Home, mesh: Any, port: int, invite: Any, say: Any) -> None:
        if home.index == sym.index:
            mesh.advertise_also(Endpoint.parse("198.51.100.99", 4000), CandidateKind.RELAYED)

    reach = Reach(honest.host, liar)
    table = mesh_table([host, sym, cone], reach=reach, hand_dir=tmp_path, timeout=180,
                       direct_wait=12.0)  # fmt: skip
    s, c = sym.index, cone.index
    assert table.links[(c, s)] == table.links[(s, c)] == "relayed by the host", table.links
    assert len(set(table.hand_digests.values())) == 1 and len(table.hand_digests) == 3
