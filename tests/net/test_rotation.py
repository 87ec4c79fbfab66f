"""A table issues a fresh invite: the old one seats nobody new, seated players keep coming back.

Everything on loopback through the real mesh: the host's door, the handshake's secret hint,
the welcome's mesh secret (so joiners seated under different invites link to each other),
restarts of a joiner and of the host.
"""

from __future__ import annotations

import socket
from dataclasses import replace
from functools import partial

import pytest
import trio
from mesh_helpers import FAST, collect

from buraco_p2p.net.channel.handshake import secret_hint
from buraco_p2p.net.channel.identity import Identity, PeerKey
from buraco_p2p.net.mesh.internet import answer_reply_code
from buraco_p2p.net.mesh.mesh import JoinRequest, Mesh, MeshError
from buraco_p2p.net.mesh.startup import host_table, join_table
from buraco_p2p.net.reach.candidates import Candidate, CandidateKind
from buraco_p2p.net.reach.invite import Endpoint
from buraco_p2p.net.reach.reply import ReplyCode
from buraco_p2p.net.reach.shortcode import ShortCode, ShortCodeLinkError, fetch_invite
from buraco_p2p.net.table.table import JoinRefused


async def wait_down(mesh: Mesh, key: PeerKey) -> None:
    with trio.fail_after(10):
        while mesh.is_up(key):
            await trio.sleep(0.02)


async def test_after_a_rotation_the_old_invite_seats_nobody_new() -> None:
    ana, bia, eve, caio = (Identity.generate(n) for n in ("ana", "bia", "eve", "caio"))
    async with host_table(ana, config=FAST) as host:
        old = host.invite
        async with join_table(bia, old, config=FAST) as b:
            new = host.rotate_invite()
            assert new.room_secret != old.room_secret
            assert (new.table_id, new.host_key, new.addresses) == (
                old.table_id, old.host_key, old.addresses,
            )
            assert host.invite == new
            with pytest.raises(JoinRefused, match="replaced by a newer one"):
                async with join_table(eve, old, config=FAST):
                    raise AssertionError("seated with a replaced invite")
            assert host.roster is not None and host.roster.member(eve.public) is None
            assert any("replaced invite" in r for r in host.rejections)
            # A joiner with the new invite is seated, and links to bia, seated with the old one.
            async with join_table(caio, new, config=FAST) as c:
                with trio.fail_after(10):
                    for m in (host, b, c):
                        await m.wait_all_up(3)
                assert c.mesh_secret == b.mesh_secret == host.mesh_secret
                await c.send(b.me, "from caio")
                await b.send(c.me, "from bia")
                assert await collect(b, 1) == [(c.me, "from caio")]
                assert await collect(c, 1) == [(b.me, "from bia")]


async def test_a_request_already_waiting_when_the_invite_is_replaced_keeps_its_place() -> None:
    asked = trio.Event()
    answer = trio.Event()

    async def approve(request: JoinRequest) -> bool:
        asked.set()
        await answer.wait()
        return True

    ana, bia = Identity.generate("ana"), Identity.generate("bia")
    async with host_table(ana, config=FAST, approve=approve) as host:
        old = host.invite
        async with trio.open_nursery() as nursery:

            async def join() -> None:
                async with join_table(bia, old, config=FAST) as b:
                    assert b.roster is not None and b.roster.member(bia.public) is not None

            nursery.start_soon(join)
            with trio.fail_after(10):
                await asked.wait()
            host.rotate_invite()
            answer.set()
        assert host.roster is not None and host.roster.member(bia.public) is not None


async def test_a_seated_player_restarts_and_rejoins_with_the_old_invite() -> None:
    ana, bia, caio = (Identity.generate(n) for n in ("ana", "bia", "caio"))
    async with host_table(ana, config=FAST, seats=3) as host, trio.open_nursery() as nursery:
        old = host.invite
        scope = trio.CancelScope()

        async def run_bia(task_status: trio.TaskStatus[Mesh]) -> None:
            with scope:
                async with join_table(bia, old, config=FAST) as b:
                    task_status.started(b)
                    await trio.sleep_forever()

        b: Mesh = await nursery.start(run_bia)
        host.rotate_invite()
        newest = host.rotate_invite()  # two rotations: the first invite is two behind
        assert len(host.retired_secrets) == 2
        async with join_table(caio, newest, config=FAST) as c:
            with trio.fail_after(10):
                for m in (host, b, c):
                    await m.wait_all_up()
            saved = b.snapshot()
            scope.cancel()  # bia's process dies
            await wait_down(host, bia.public)
            await wait_down(c, bia.public)
            await c.send(bia.public, "while you were away")
            # The table is full, and bia comes back with the first invite: her seat is hers.
            async with join_table(bia, old, config=FAST, state=saved) as b2:
                with trio.fail_after(10):
                    for m in (host, b2, c):
                        await m.wait_all_up()
                assert host.roster is not None
                member = host.roster.member(bia.public)
                assert member is not None and member.seat == 1
                assert await collect(b2, 1) == [(c.me, "while you were away")]
        nursery.cancel_scope.cancel()


async def test_a_relayed_pair_seated_under_different_invites_links_through_the_host() -> None:
    ana, bia, caio = (Identity.generate(n) for n in ("ana", "bia", "caio"))
    pair = {bia.public, caio.public}

    def no_direct(a: PeerKey, b: PeerKey) -> bool:
        return {a, b} == pair

    config = replace(FAST, refuse_direct=no_direct)
    async with (
        host_table(ana, config=config, seats=3) as host,
        join_table(bia, host.invite, config=config) as b,
        join_table(caio, host.rotate_invite(), config=config) as c,
    ):
        with trio.fail_after(10):
            for m in (host, b, c):
                await m.wait_all_up()
        assert b.is_relayed(c.me) and c.is_relayed(b.me)
        await b.send(c.me, "through the host")
        assert await collect(c, 1) == [(b.me, "through the host")]


async def test_only_the_host_rotates() -> None:
    ana, bia = Identity.generate("ana"), Identity.generate("bia")
    async with host_table(ana, config=FAST) as host, join_table(bia, host.invite, config=FAST) as b:
        with pytest.raises(MeshError, match="only the host"):
            b.rotate_invite()


async def test_rotated_secrets_never_share_a_hint() -> None:
    async with host_table(Identity.generate("ana"), config=FAST) as host:
        for _ in range(20):
            host.rotate_invite()
        secrets = (host.room_secret, *host.retired_secrets)
        assert len({secret_hint(s, host.table_id) for s in secrets}) == 21


async def test_a_restarted_host_keeps_honouring_rotated_invites() -> None:
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    ana, bia, caio, eve = (Identity.generate(n) for n in ("ana", "bia", "caio", "eve"))
    host_scope = trio.CancelScope()

    async def run_host(task_status: trio.TaskStatus[Mesh], **restore: object) -> None:
        with host_scope:
            async with host_table(
                ana, port=port, config=FAST, table_id=b"T" * 16,
                **restore,  # type: ignore[arg-type]
            ) as h:
                task_status.started(h)
                await trio.sleep_forever()

    reached_end = False
    async with trio.open_nursery() as nursery:
        host: Mesh = await nursery.start(partial(run_host, room_secret=b"S" * 16))
        first = host.invite
        async with join_table(bia, first, config=FAST) as b:
            second = host.rotate_invite()
            async with join_table(caio, second, config=FAST) as c:
                with trio.fail_after(10):
                    for m in (host, b, c):
                        await m.wait_all_up(3)
                saved = dict(
                    room_secret=host.room_secret, retired_secrets=host.retired_secrets,
                    mesh_secret=host.mesh_secret, roster=host.roster, state=host.snapshot(),
                )
                host_scope.cancel()
                await wait_down(b, ana.public)
                host_scope = trio.CancelScope()
                host2: Mesh = await nursery.start(partial(run_host, **saved))
                with trio.fail_after(10):
                    for m in (host2, b, c):
                        await m.wait_all_up(3)
                assert host2.invite.room_secret == second.room_secret
                with pytest.raises(JoinRefused, match="replaced"):
                    async with join_table(eve, first, config=FAST):
                        raise AssertionError("seated with a replaced invite")
                await b.send(c.me, "after the host came back")
                assert await collect(c, 1) == [(b.me, "after the host came back")]
                reached_end = True
        nursery.cancel_scope.cancel()
    assert reached_end


async def test_a_reply_code_made_with_a_replaced_invite_is_still_read() -> None:
    """A seated player behind a NAT who comes back with the old invite pastes a reply code
    keyed with it: the host dials it (the handshake then decides, as for any connection)."""
    async with host_table(Identity.generate("ana"), config=FAST) as host:
        old = host.invite
        host.rotate_invite()
        port = host.advertised[0].port
        nowhere = Candidate(CandidateKind.HOST, Endpoint.parse("127.0.0.1", 9))
        said: list[str] = []
        text = ReplyCode((nowhere,)).to_text(old.room_secret, old.table_id)
        await answer_reply_code(host, port, text, said.append, window=0.2)
        assert not any("reply code refused" in line for line in said), said
        assert any("dialing 127.0.0.1:9" in line for line in said)
        said.clear()
        other = ReplyCode((nowhere,)).to_text(bytes(16), old.table_id)
        await answer_reply_code(host, port, other, said.append, window=0.2)
        assert any("reply code refused" in line for line in said)


async def test_a_replaced_short_code_fetches_no_invite() -> None:
    async with host_table(Identity.generate("ana"), config=FAST) as host:
        old = ShortCode.for_invite(host.invite)
        new = ShortCode.for_invite(host.rotate_invite())
        assert old is not None and new is not None
        with pytest.raises(ShortCodeLinkError):
            await fetch_invite(old, Identity.generate("eve"), timeout=5)
        assert any("replaced short code" in r for r in host.rejections)
        assert await fetch_invite(new, Identity.generate("caio"), timeout=5) == host.invite
