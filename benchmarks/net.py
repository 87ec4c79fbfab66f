"""Timings of the network layer over loopback, printed as one JSON object.

    python benchmarks/net.py [--handshakes N] [--messages N] [--no-mesh]

- handshake_ms: median wall time of TCP connect + the full key exchange (until the initiator
  has the responder's READY), over 127.0.0.1; handshake_p90_ms alongside.
- link_msgs_per_s: one-way throughput of 1 KiB messages (a dict holding 1024 random bytes)
  on one link, sender and receiver in this process, including msgpack and AEAD both ways.
- broadcast_p50_ms, broadcast_p99_ms, relay_msgs_per_s: from the mesh's own benchmark
  (`buraco_p2p.net.mesh.benchmark`): a 1 KiB message to all three peers, and throughput of a
  pair talking through the host's relay.
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--handshakes", type=int, default=200)
    parser.add_argument("--messages", type=int, default=20000)
    parser.add_argument("--no-mesh", action="store_true", help="skip the mesh benchmark")
    args = parser.parse_args()

    times = trio.run(_handshakes, args.handshakes)
    result: dict[str, Any] = {
        "handshake_ms": round(statistics.median(times) * 1000, 3),
        "handshake_p90_ms": round(statistics.quantiles(times, n=10)[-1] * 1000, 3),
        "link_msgs_per_s": round(trio.run(_throughput, args.messages)),
    }
    if not args.no_mesh:
        try:
            from buraco_p2p.net import mesh
        except ImportError as exc:
            result["mesh_error"] = f"mesh benchmark unavailable: {exc}"
        else:
            for key, value in mesh.benchmark().items():
                result[key] = round(value, 3) if isinstance(value, float) else value
    print(json.dumps(result, sort_keys=True))


if __name__ == "__main__":
    main()
