"""A peer's messages waiting unread are capped in bytes, not only in number."""

from __future__ import annotations

from dataclasses import replace

import trio
from mesh_helpers import FAST, assert_quiet, collect

from buraco_p2p.net.channel.identity import Identity
from buraco_p2p.net.mesh.startup import host_table, join_table

CAP = 64 * 1024


async def test_a_peer_past_the_unread_byte_cap_loses_its_link_and_nothing_is_lost() -> None:
    config = replace(FAST, max_unread_bytes=CAP)
    ids = [Identity.generate(n) for n in ("ana", "bia")]
    async with (
        host_table(ids[0], config=config) as host,
        join_table(ids[1], host.invite, config=config) as b,
    ):
        with trio.fail_after(10):
            await b.wait_all_up(2)
        # 40 messages of 8 KiB: five times the cap, far below the count limit (8192).
        for i in range(40):
            await b.send(host.me, [i, bytes(8 * 1024)])
        with trio.fail_after(10):
            while not any("bytes of messages we have not read yet" in r for r in host.rejections):
                await trio.sleep(0.01)
        assert any("bia" in r and str(CAP) in r for r in host.rejections)
        assert host.records[b.me].unread_bytes <= CAP
        # Reading drains the inbox; the rest comes again after the reconnect, once each.
        got = await collect(host, 40, timeout=20)
        assert [msg[0] for _, msg in got] == list(range(40))
        await assert_quiet(host)
        assert host.records[b.me].unread_bytes == 0
