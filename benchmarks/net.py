"""Timings of the network layer over loopback, printed as one JSON object.

    python benchmarks/net.py [--handshakes N] [--messages N] [--rounds N] [--no-mesh]

- handshake_ms: median wall time of TCP connect + the full key exchange (until the initiator
  has the responder's READY), over 127.0.0.1; handshake_p90_ms alongside.
- link_msgs_per_s: one-way throughput of 1 KiB messages (a dict holding 1024 random bytes)
  on one link, sender and receiver in this process, including msgpack and AEAD both ways.
- broadcast_p50_ms, broadcast_p99_ms: a 1 KiB message from the host to all three peers of a
  table on 127.0.0.1, until all three have it; relay_msgs_per_s: throughput of a pair whose
  direct link is refused, talking through the host's relay.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from typing import Any

import trio

from buraco_p2p.net.identity import Identity
from buraco_p2p.net.link import SecureLink, connect, handshake
from buraco_p2p.net.mesh import Mesh, MeshConfig, host_table, join_table

ROOM = os.urandom(16)
TABLE = b"bench-table-0001"


async def _handshakes(count: int) -> list[float]:
    host, guest = Identity.generate("host"), Identity.generate("guest")
    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    port = listeners[0].socket.getsockname()[1]
    times: list[float] = []
    async with trio.open_nursery() as nursery:

        async def serve() -> None:
            while True:
                stream = await listeners[0].accept()
                link = await handshake(
                    stream, host, room_secret=ROOM, table_id=TABLE, initiator=False
                )
                await link.aclose()

        nursery.start_soon(serve)
        for _ in range(count):
            start = time.perf_counter()
            link = await connect("127.0.0.1", port, guest, room_secret=ROOM, table_id=TABLE)
            times.append(time.perf_counter() - start)
            await link.aclose()
        nursery.cancel_scope.cancel()
    await listeners[0].aclose()
    return times


async def _throughput(count: int) -> float:
    host, guest = Identity.generate("host"), Identity.generate("guest")
    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    port = listeners[0].socket.getsockname()[1]
    accepted: list[SecureLink] = []
    async with trio.open_nursery() as nursery:

        async def accept() -> None:
            stream = await listeners[0].accept()
            accepted.append(
                await handshake(stream, host, room_secret=ROOM, table_id=TABLE, initiator=False)
            )

        nursery.start_soon(accept)
        sender = await connect("127.0.0.1", port, guest, room_secret=ROOM, table_id=TABLE)
    receiver = accepted[0]
    message = {"kind": "bench", "body": os.urandom(1024)}
    start = time.perf_counter()
    async with trio.open_nursery() as nursery:

        async def send_all() -> None:
            for _ in range(count):
                await sender.send(message)

        nursery.start_soon(send_all)
        for _ in range(count):
            received = await receiver.receive()
        assert received == message
    elapsed = time.perf_counter() - start
    await sender.aclose()
    await receiver.aclose()
    await listeners[0].aclose()
    return count / elapsed


async def _mesh(rounds: int, relay_messages: int) -> dict[str, float]:
    """Broadcast latency (1 KiB from the host to three peers) and relay throughput (a pair
    whose direct link is refused talks through the host), over loopback."""
    ids = [Identity.generate(n) for n in ("ana", "bia", "caio", "duda")]
    blocked = {ids[1].public, ids[2].public}
    config = MeshConfig(refuse_direct=lambda a, b: {a, b} == blocked)
    async with (
        host_table(ids[0], config=config) as host,
        join_table(ids[1], host.invite, config=config) as b,
        join_table(ids[2], host.invite, config=config) as c,
        join_table(ids[3], host.invite, config=config) as d,
    ):
        for m in (host, b, c, d):
            await m.wait_all_up()
        payload = bytes(1024)
        arrivals = trio.Semaphore(0, max_value=10**9)

        async def drain(mesh: Mesh) -> None:
            while True:
                await mesh.receive()
                arrivals.release()

        samples: list[float] = []
        async with trio.open_nursery() as nursery:
            for m in (b, c, d):
                nursery.start_soon(drain, m)
            for i in range(rounds + 50):
                start = time.perf_counter()
                await host.broadcast([i, payload])
                for _ in range(3):
                    await arrivals.acquire()
                if i >= 50:
                    samples.append((time.perf_counter() - start) * 1000)
            nursery.cancel_scope.cancel()
        samples.sort()
        p99 = samples[min(len(samples) - 1, round(0.99 * (len(samples) - 1)))]
        # Relay throughput: b -> c through the host, 1 KiB messages.
        assert b.is_relayed(c.me)
        start = time.perf_counter()
        async with trio.open_nursery() as inner:

            async def pump() -> None:
                for i in range(relay_messages):
                    await b.send(c.me, [i, payload])

            inner.start_soon(pump)
            for _ in range(relay_messages):
                await c.receive()
        relay_rate = relay_messages / (time.perf_counter() - start)
        return {
            "broadcast_p50_ms": round(statistics.median(samples), 3),
            "broadcast_p99_ms": round(p99, 3),
            "relay_msgs_per_s": round(relay_rate, 1),
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--handshakes", type=int, default=200)
    parser.add_argument("--messages", type=int, default=20000)
    parser.add_argument("--rounds", type=int, default=1000, help="broadcasts to time")
    parser.add_argument("--relay-messages", type=int, default=3000)
    parser.add_argument("--no-mesh", action="store_true", help="skip the table benchmarks")
    args = parser.parse_args()

    times = trio.run(_handshakes, args.handshakes)
    result: dict[str, Any] = {
        "handshake_ms": round(statistics.median(times) * 1000, 3),
        "handshake_p90_ms": round(statistics.quantiles(times, n=10)[-1] * 1000, 3),
        "link_msgs_per_s": round(trio.run(_throughput, args.messages)),
    }
    if not args.no_mesh:
        result.update(trio.run(_mesh, args.rounds, args.relay_messages))
    print(json.dumps(result, sort_keys=True))


if __name__ == "__main__":
    main()
