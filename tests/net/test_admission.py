"""Admission under a stranger's pressure: small greetings, bounded and expiring requests."""

from __future__ import annotations

import contextlib
from collections import deque

import msgpack
import pytest
import trio
from mesh_helpers import FAST, raw_link

from buraco_p2p.net.channel.errors import LinkClosed, LinkError
from buraco_p2p.net.channel.framing import KIND_DATA
from buraco_p2p.net.channel.identity import Identity, PeerKey
from buraco_p2p.net.mesh.mesh import JoinRequest
from buraco_p2p.net.mesh.startup import host_table, join_table
from buraco_p2p.net.reach.invite import Invite
from buraco_p2p.net.table.table import JoinRefused, join_message


async def _wait_rejection(rejections: deque[str], needle: str) -> str:
    with trio.fail_after(5):
        while True:
            for text in list(rejections):
                if needle in text:
                    return text
            await trio.sleep(0.01)


async def test_a_stranger_greeting_over_the_preseat_bound_is_refused_unread() -> None:
    async with host_table(Identity.generate("ana"), config=FAST) as host:
        invite = host.invite
        async with join_table(Identity.generate("bia"), invite, config=FAST) as bia:
            eve = await raw_link(invite, Identity.generate("eve"), invite.addresses[0], host.me)
            # A codec-valid greeting of 64 KiB: refused from its frame header, never decoded.
            await eve.send(["join", {"addrs": [], "pad": bytes(65536)}])
            text = await _wait_rejection(host.rejections, "eve")
            assert "limit is" in text and "frame of" in text, text
            with trio.fail_after(5), pytest.raises(LinkError):
                await eve.receive()
            # The seated peer is untouched and, seated, sends full-size messages.
            await bia.send(host.me, {"big": bytes(200_000)})
            with trio.fail_after(5):
                peer, message = await host.receive()
            assert peer == bia.me and len(message["big"]) == 200_000


async def test_join_requests_are_bounded_in_number() -> None:
    asked: list[JoinRequest] = []

    async def approve(request: JoinRequest) -> bool:
        asked.append(request)
        await trio.sleep_forever()
        raise AssertionError("unreachable")  # pragma: no cover

    async with host_table(Identity.generate("ana"), config=FAST, approve=approve) as host:
        host.door.max_requests = 3
        invite = host.invite
        links = []
        for n in range(3):
            link = await raw_link(invite, Identity.generate(f"j{n}"), invite.addresses[0], host.me)
            await link.send(join_message(()))
            links.append(link)
        with trio.fail_after(5):
            while host.door.waiting < 3:
                await trio.sleep(0.01)
        extra = await raw_link(invite, Identity.generate("j3"), invite.addresses[0], host.me)
        await extra.send(join_message(()))
        with trio.fail_after(5):
            answer = await extra.receive()
        assert answer[0] == "refused" and "too many join requests" in answer[1]
        assert [r.number for r in asked] == [1]  # one question at a time, numbered
        assert host.door.waiting == 3
        for link in [*links, extra]:
            await link.aclose()


async def test_a_join_request_nobody_answers_expires_with_a_refusal() -> None:
    withdrawn = trio.Event()

    async def approve(request: JoinRequest) -> bool:
        try:
            await trio.sleep_forever()
        finally:
            withdrawn.set()
        raise AssertionError("unreachable")  # pragma: no cover

    async with host_table(Identity.generate("ana"), config=FAST, approve=approve) as host:
        host.door.request_timeout = 0.5
        with trio.fail_after(10), pytest.raises(JoinRefused, match="did not answer within"):
            async with join_table(Identity.generate("bia"), host.invite, config=FAST):
                raise AssertionError("seated without an answer")  # pragma: no cover
        assert withdrawn.is_set()
        assert host.door.expired == 1 and host.door.waiting == 0
        assert host.roster is not None and len(host.roster.members) == 1


async def test_a_request_queued_behind_another_expires_too() -> None:
    async def approve(request: JoinRequest) -> bool:
        await trio.sleep_forever()
        raise AssertionError("unreachable")  # pragma: no cover

    async with host_table(Identity.generate("ana"), config=FAST, approve=approve) as host:
        host.door.request_timeout = 0.5
        invite = host.invite
        first = await raw_link(invite, Identity.generate("j0"), invite.addresses[0], host.me)
        second = await raw_link(invite, Identity.generate("j1"), invite.addresses[0], host.me)
        for link in (first, second):
            await link.send(join_message(()))
        with trio.fail_after(5):
            for link in (first, second):
                answer = await link.receive()
                assert answer[0] == "refused" and "did not answer" in answer[1]
        assert host.door.expired == 2
        for link in (first, second):
            with trio.fail_after(5), pytest.raises(LinkClosed):
                await link.receive()


def costly_greeting() -> bytes:
    """About 1 MiB of msgpack within the codec's default limits that is slow to decode
    (16,000 arrays of 60 small integers): close to a second of CPU per copy."""
    return msgpack.packb(["join", [[1] * 60] * 16_000])


async def _flood(invite: Invite, host: PeerKey, payload: bytes, rounds: int) -> int:
    """An invite holder sending `payload` as its greeting, again and again; returns tries
    (the host may hang up before the whole greeting is sent)."""
    sent = 0
    for n in range(rounds):
        try:
            link = await raw_link(invite, Identity.generate(f"m{n}"), invite.addresses[0], host)
        except LinkError:
            continue
        sent += 1
        with contextlib.suppress(LinkError):
            await link._send_frame(KIND_DATA, payload)
            with trio.move_on_after(2):
                await link.receive()
        await link.aclose()
    return sent


async def test_costly_greetings_from_invite_holders_do_not_stall_the_seated() -> None:
    payload = costly_greeting()
    assert len(payload) > 1_000_000
    async with host_table(Identity.generate("ana"), config=FAST) as host:
        invite = host.invite
        async with (
            join_table(Identity.generate("bia"), invite, config=FAST) as bia,
            trio.open_nursery() as nursery,
        ):

            async def echo() -> None:
                while True:
                    peer, message = await host.receive()
                    await host.send(peer, message)

            nursery.start_soon(echo)
            sends: list[int] = []

            async def attacker() -> None:
                sends.append(await _flood(invite, host.me, payload, 3))

            async with trio.open_nursery() as attack:
                for _ in range(6):
                    attack.start_soon(attacker)
                round_trips = []
                for n in range(20):
                    start = trio.current_time()
                    await bia.send(host.me, ["ping", n])
                    with trio.fail_after(10):
                        assert await bia.receive() == (host.me, ["ping", n])
                    round_trips.append(trio.current_time() - start)
                    await trio.sleep(0.05)
            assert sum(sends) >= 6
            # A generous bound: each greeting decoded would block the host for ~1 s.
            assert max(round_trips) < 1.0, round_trips
            assert bia.is_up(host.me) and host.is_up(bia.me)
            refused = [r for r in host.rejections if "limit is" in r]
            assert refused, list(host.rejections)
            nursery.cancel_scope.cancel()
