"""Arbitrary codec values from a seated peer, on every kind of authenticated link.

The hostile peer (duda, seat 3) sends each value on one of its three links: to the host
(direct), to bia (a direct link between joiners) and to caio (relayed through the host,
because the direct link between duda and caio is refused); a hostile host sends some to bia.
After each value the sender sends an ordinary sequenced probe. Whatever the value did, the
receiver stays up, the other links stay up, every seat stays taken, and the probe arrives
exactly once and in order, on the same link or after the reconnect when the value got the
link closed; a value that is not a record the link carries always gets the link closed,
with a reason naming the sender.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
import trio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mesh_helpers import FAST, table_of_four

from buraco_p2p.net.channel.identity import Identity, PeerKey
from buraco_p2p.net.mesh.mesh import (
    HOST_TO_JOINER_TAGS,
    JOINER_TO_HOST_TAGS,
    PEER_TAGS,
    Mesh,
    MeshConfig,
)

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.text(max_size=12)
    | st.binary(max_size=40)
)
values = st.recursive(
    scalars,
    lambda children: (
        st.lists(children, max_size=5)
        | st.dictionaries(st.text(max_size=4) | st.integers(-9, 9), children, max_size=4)
    ),
    max_leaves=16,
)
TAGS = sorted(JOINER_TO_HOST_TAGS | HOST_TO_JOINER_TAGS | {"r", "join", "mesh", "welcome"})


def _not_own_data(value: Any) -> bool:
    """Left out: a `d` record forged by the sender itself, which only breaks its own
    stream, and `["leave"]`, with which it lawfully gives up its own seat."""
    return not (isinstance(value, list) and (value[:1] == ["d"] or value == ["leave"]))


# Mostly near-records (a real tag, arbitrary fields), the rest any value at all.
hostile = (
    st.builds(lambda tag, rest: [tag, *rest], st.sampled_from(TAGS), st.lists(values, max_size=4))
    | values
).filter(_not_own_data)


def carried(value: Any, allowed: frozenset[str]) -> bool:
    return (
        isinstance(value, list) and bool(value) and isinstance(value[0], str)
        and value[0] in allowed
    )


async def run_fuzz(draw: Any, count: int) -> int:
    ids = [Identity.generate(n) for n in ("ana", "bia", "caio", "duda")]
    caio, duda = ids[2].public, ids[3].public

    def refuse(x: PeerKey, y: PeerKey) -> bool:
        return {x, y} == {caio, duda}

    config: MeshConfig = replace(FAST, refuse_direct=refuse, direct_retry_min=3600.0)
    closed = 0
    async with table_of_four(config, ids) as meshes:
        host, b, c, d = meshes
        assert d.is_relayed(c.me) and not d.is_relayed(b.me)
        # (sender, receiver, what the receiver accepts there): duda on all three kinds of
        # link, and a hostile host towards bia.
        pairs: list[tuple[Mesh, Mesh, frozenset[str]]] = [
            (d, host, JOINER_TO_HOST_TAGS),
            (d, b, PEER_TAGS),
            (d, c, PEER_TAGS),
            (host, b, HOST_TO_JOINER_TAGS),
        ]
        for i in range(count):
            sender, target, allowed = pairs[i % len(pairs)]
            name = sender.identity.nickname
            value = draw()
            with trio.fail_after(10):
                while not sender.is_up(target.me):
                    await trio.sleep(0.005)
            # `rejections` keeps only the latest 200: start each value from an empty list.
            target.rejections.clear()
            await sender.send_control(target.me, value)
            await sender.send(target.me, ["probe", i])
            with trio.fail_after(10):
                got = await target.receive()
            assert got == (sender.me, ["probe", i]), (value, got)
            new = list(target.rejections)
            if not carried(value, allowed):
                assert any(name in r for r in new), (value, new)
            closed += any(name in r for r in new)
            # Nobody else noticed anything, and every seat is still taken.
            for m in meshes:
                assert m.roster is not None and len(m.roster.members) == 4
                for k in m.peers():
                    if m is not sender and m is not target and k not in (sender.me, target.me):
                        assert m.is_up(k), (value, m.identity.nickname)
    return closed


@settings(
    max_examples=2, deadline=None, suppress_health_check=list(HealthCheck), database=None
)
@given(st.data())
async def test_arbitrary_values_on_authenticated_links_end_only_the_senders_link(
    data: st.DataObject,
) -> None:
    closed = await run_fuzz(lambda: data.draw(hostile), 48)
    assert closed > 0


@pytest.mark.slow
@settings(
    max_examples=20, deadline=None, suppress_health_check=list(HealthCheck), database=None
)
@given(st.data())
async def test_soak_ten_thousand_hostile_values_take_down_no_peer(data: st.DataObject) -> None:
    await run_fuzz(lambda: data.draw(hostile), 500)


# Records that once took a whole process down, and their neighbours in shape.
KNOWN_HOSTILE: list[Any] = [
    [[1], 2],
    [{"x": 1}, 2],
    {"d": 1},
    [None],
    [],
    ["r", b"x" * 16, 0, None, 0],
    ["roster", {}],
    ["zz"],
]


async def test_known_hostile_records_on_direct_relayed_and_host_links() -> None:
    # Each value goes on all four links in turn: duda to the host, to bia (direct), to caio
    # (relayed), and the host to bia.
    queue = [value for value in KNOWN_HOSTILE for _ in range(4)]
    count = len(queue)
    closed = await run_fuzz(lambda: queue.pop(0), count)
    assert closed == count  # none of them is a record its link carries in that form
