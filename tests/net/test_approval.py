"""Approval is given to a joiner that is still there: one that hung up gets no seat."""

from __future__ import annotations

import trio
from mesh_helpers import FAST, raw_link

from buraco_p2p.net.channel.identity import Identity
from buraco_p2p.net.mesh.mesh import JoinRequest
from buraco_p2p.net.mesh.startup import host_table, join_table
from buraco_p2p.net.table.table import HostTable, Member, join_message

LEFT = "left before the host answered"


async def test_joiner_that_hangs_up_while_the_host_decides_is_not_seated() -> None:
    asked = trio.Event()
    decide = trio.Event()
    withdrawn: list[str] = []

    async def approve(request: JoinRequest) -> bool:
        if request.nickname == "bia":
            asked.set()
            try:
                await decide.wait()  # the host takes its time, then says yes
            except trio.Cancelled:
                withdrawn.append(request.nickname)
                raise
        return True

    async with host_table(Identity.generate("ana"), config=FAST, approve=approve) as host:
        invite = host.invite
        ep = invite.addresses[0]
        link = await raw_link(invite, Identity.generate("bia"), ep, host.me)
        await link.send(join_message(()))
        with trio.fail_after(5):
            await asked.wait()
        await link.aclose()  # bia gives up waiting
        with trio.move_on_after(5):
            while not any(LEFT in r for r in host.rejections):
                await trio.sleep(0.01)
        decide.set()  # the yes comes too late
        async with join_table(Identity.generate("caio"), invite, config=FAST) as c:
            assert c.roster is not None and c.roster.member(c.me) is not None
            assert c.roster.member(c.me).seat == 1  # type: ignore[union-attr]
            assert host.roster is not None
            assert [m.nickname for m in host.roster.members] == ["ana", "caio"]
        assert withdrawn == ["bia"]
        assert any("bia" in r and LEFT in r for r in host.rejections), list(host.rejections)


async def test_joiner_that_speaks_before_it_is_answered_is_not_seated() -> None:
    asked = trio.Event()

    async def approve(request: JoinRequest) -> bool:
        asked.set()
        await trio.sleep(60)  # still deciding when the joiner speaks
        return True

    async with host_table(Identity.generate("ana"), config=FAST, approve=approve) as host:
        invite = host.invite
        ep = invite.addresses[0]
        link = await raw_link(invite, Identity.generate("eve"), ep, host.me)
        await link.send(join_message(()))
        with trio.fail_after(5):
            await asked.wait()
        await link.send(["chat", "let me in"])
        with trio.fail_after(5):
            while not any(LEFT in r for r in host.rejections):
                await trio.sleep(0.01)
        assert host.roster is not None and len(host.roster.members) == 1
        await link.aclose()


async def test_joiner_that_gives_up_waiting_is_not_seated() -> None:
    """`join_table` cancelled during the question hangs up, and the host withdraws it."""
    asked = trio.Event()
    withdrawn = trio.Event()

    async def approve(request: JoinRequest) -> bool:
        asked.set()
        try:
            await trio.sleep(60)
        except trio.Cancelled:
            withdrawn.set()
            raise
        return True

    async with host_table(Identity.generate("ana"), config=FAST, approve=approve) as host:

        async def join() -> None:
            async with join_table(Identity.generate("bia"), host.invite, config=FAST):
                raise AssertionError("seated without an answer")  # pragma: no cover

        async with trio.open_nursery() as nursery:
            nursery.start_soon(join)
            with trio.fail_after(5):
                await asked.wait()
            nursery.cancel_scope.cancel()
        with trio.fail_after(5):
            await withdrawn.wait()
        assert host.roster is not None and len(host.roster.members) == 1
        assert any("bia" in r and LEFT in r for r in host.rejections), list(host.rejections)


def test_only_the_seat_just_given_can_be_taken_back() -> None:
    ids = [Identity.generate(n) for n in ("ana", "bia", "caio")]
    table = HostTable(bytes(16), Member(0, ids[0].public, "ana", ()))
    table.seat_new(ids[1].public, "bia", ())
    table.seat_new(ids[2].public, "caio", ())
    version = table.roster.version
    assert not table.vacate(ids[1].public)  # not the last seat: seat numbers stay put
    assert not table.vacate(ids[0].public)
    assert table.roster.version == version
    assert table.vacate(ids[2].public)
    assert [m.nickname for m in table.roster.members] == ["ana", "bia"]
    assert table.roster.version == version + 1
    assert table.classify(ids[2].public) == "new"
