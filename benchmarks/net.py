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
import gc
import json
import os
import statistics
import struct
import time
import tracemalloc
from typing import Any

import trio

from buraco_p2p import codec
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
    result.update(codec_worst_frames())
    print(json.dumps(result, sort_keys=True))


def _frames_within_limits(limits: codec.Limits) -> dict[str, bytes]:
    """Hostile frames the limits accept, each as costly to decode as its shape allows: as many
    tiny objects as `max_objects` lets through (empty arrays and maps, ints, short strings,
    maps of distinct keys), the longest strings and bins, the deepest nesting; each padded
    with a bin up to `max_bytes`, the most a peer may send."""

    def array(items: list[bytes]) -> bytes:
        n = len(items)
        head = bytes([0x90 | n]) if n < 16 else b"\xdc" + struct.pack(">H", n)
        return head + b"".join(items)

    def chunked(item: bytes, count: int, per_object: int = 1) -> list[bytes]:
        out, left = [], count
        while left > 0:
            m = min(limits.max_array_len, left // per_object)
            if m <= 0:
                break
            out.append(array([item] * m))
            left -= m * per_object + 1
        return out

    budget = limits.max_objects - 16
    mapping = b"".join(b"\xcd" + struct.pack(">H", k) + b"\xc0" for k in range(256, 256 + 4095))
    shapes: dict[str, list[bytes]] = {
        "empty_arrays": chunked(b"\x90", budget),
        "empty_maps": chunked(b"\x80", budget),
        "small_ints": chunked(b"\x05", budget),
        "uint64": chunked(b"\xcf" + (2**64 - 1).to_bytes(8, "big"), budget),
        "int64": chunked(b"\xd3" + (-(2**63)).to_bytes(8, "big", signed=True), budget),
        "short_strs": chunked(b"\xa1x", budget),
        "maps_of_int_keys": [b"\xde\x0f\xff" + mapping] * (budget // 8192),
        "long_strs": [b"\xda" + struct.pack(">H", 65535) + b"x" * 65535] * 15,
        "deepest": [b"\x91" * (limits.max_depth - 3) + b"\x90"],
    }
    frames = {}
    for name, items in shapes.items():
        body = array(items)
        room = limits.max_bytes - len(body) - 8
        if room >= 1 << 16:
            pad = b"\xc6" + struct.pack(">I", room) + bytes(room)
        elif room >= 1 << 8:
            pad = b"\xc5" + struct.pack(">H", room) + bytes(room)
        else:
            pad = b""
        frames[name] = array([body, pad]) if pad else body
    return frames


def codec_worst_frames(limits: codec.Limits = codec.DEFAULT_LIMITS) -> dict[str, Any]:
    """codec_worst_decode_ms: the slowest decode, lenient or canonical (median of 5), of the
    costliest frames the limits accept; codec_worst_rss_ratio: the most memory such a decode
    holds at its peak (Python heap, where decoded objects live), over the frame's size. Each
    frame is `max_bytes` long, so the ratio times `max_bytes` bounds what one frame can make
    a peer allocate."""
    worst_ms = 0.0
    worst_ratio = 0.0
    detail: dict[str, list[float]] = {}
    for name, frame in _frames_within_limits(limits).items():
        ms = 0.0
        for canonical in (False, True):
            runs = []
            for _ in range(5):
                start = time.perf_counter()
                codec.unpack(frame, limits=limits, canonical=canonical)
                runs.append((time.perf_counter() - start) * 1000)
            ms = max(ms, statistics.median(runs))
        gc.collect()
        tracemalloc.start()
        value = codec.unpack(frame, limits=limits)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        del value
        ratio = peak / len(frame)
        detail[name] = [round(ms, 2), round(ratio, 2), len(frame)]
        worst_ms = max(worst_ms, ms)
        worst_ratio = max(worst_ratio, ratio)
    return {
        "codec_worst_decode_ms": round(worst_ms, 2),
        "codec_worst_rss_ratio": round(worst_ratio, 2),
        "codec_frames_ms_ratio_bytes": detail,
    }


if __name__ == "__main__":
    main()
