"""A table never looks alive when it is not: a failing listener ends the mesh with one
clear error, and a failure while handling one accepted link ends that link only."""

from __future__ import annotations

import pytest
import trio
from mesh_helpers import FAST

from buraco_p2p.net.channel.identity import Identity
from buraco_p2p.net.mesh.mesh import JoinRequest, MeshError
from buraco_p2p.net.mesh.startup import host_table, join_table


async def test_an_approver_that_raises_ends_that_joiners_link_only() -> None:
    async def approve(request: JoinRequest) -> bool:
        await trio.lowlevel.checkpoint()
        if request.nickname == "eve":
            raise RuntimeError("the prompt broke")
        return True

    async with host_table(Identity.generate("ana"), config=FAST, approve=approve) as host:
        with pytest.raises(MeshError), trio.fail_after(10):
            async with join_table(Identity.generate("eve"), host.invite, config=FAST):
                pass
        assert any("eve" in r and "RuntimeError: the prompt broke" in r for r in host.rejections)
        async with join_table(Identity.generate("bia"), host.invite, config=FAST) as b:
            with trio.fail_after(10):
                await b.wait_all_up(2)
            await b.send(host.me, "seated")
            with trio.fail_after(5):
                assert await host.receive() == (b.me, "seated")


async def test_a_listener_that_fails_ends_the_table_with_one_clear_error() -> None:
    with pytest.raises(MeshError, match="stopped listening for peers"):
        async with host_table(Identity.generate("ana"), config=FAST) as host:
            assert host.listeners
            host.listeners[0].socket.close()
            with trio.fail_after(5):
                await trio.sleep_forever()
