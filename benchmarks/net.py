"""Timings of the network layer over loopback, printed as one JSON object.

    python benchmarks/net.py [--handshakes N] [--messages N] [--rounds N] [--no-mesh]

- handshake_ms: median wall time of TCP connect + the full key exchange (until the initiator
  has the responder's READY), over 127.0.0.1; handshake_p90_ms alongside.
- link_msgs_per_s: one-way throughput of 1 KiB messages (a dict holding 1024 random bytes)
  on one link, sender and receiver in this process, including msgpack and AEAD both ways.
- broadcast_p50_ms, broadcast_p99_ms: a 1 KiB message from the host to all three peers of a
  table on 127.0.0.1, until all three have it; relay_msgs_per_s: throughput of a pair whose
  direct link is refused, talking through the host's relay.
- hostile_heartbeat_p99_ms: a seated peer's round trip to the host (a message the host's
  application echoes, every 20 ms) while an invite holder, in another process, floods the host
  with join greetings at the largest size a stranger may send, each the costliest to decode
  (goal <= 50); hostile_greetings_per_s is the rate of that flood.
  quiet_heartbeat_p99_ms is the same round trip just before the flood, for comparison.
- pending_join_fds: the host's open file descriptors while 300 join requests (from another
  process, over 40 loopback addresses) wait for an answer that never comes (goal <= 80);
  idle_host_fds is the same count before they come, pending_join_requests_sent how many of
  the 300 got as far as sending their greeting (the rest were turned away at the door).
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
import statistics
import struct
import subprocess
import sys
import time
import tracemalloc
from typing import Any

import msgpack
import trio

from buraco_p2p import codec
from buraco_p2p.net.channel.errors import LinkError
from buraco_p2p.net.channel.framing import KIND_DATA
from buraco_p2p.net.channel.identity import Identity, PeerKey
from buraco_p2p.net.channel.link import (
    PRESEAT_LIMITS,
    PRESEAT_MAX_BYTES,
    SecureLink,
    connect,
    handshake,
)
from buraco_p2p.net.mesh.mesh import JoinRequest, Mesh, MeshConfig
from buraco_p2p.net.mesh.startup import host_table, join_table
from buraco_p2p.net.reach.invite import Invite

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


# -- a host under attack by invite holders ------------------------------------------------

FLOOD_TASKS = 8
JOINERS = 300
JOINER_SOURCES = 40


def _costliest_greeting() -> bytes:
    """The slowest-to-decode greeting a stranger may send: as many small arrays of small
    integers as the pre-seat limits let through."""
    best = b""
    for width in range(1, PRESEAT_LIMITS.limits.max_array_len + 1):
        rows = PRESEAT_LIMITS.limits.max_array_len
        payload: bytes = msgpack.packb(["join", [[1] * width] * rows])
        while len(payload) > PRESEAT_MAX_BYTES and rows > 1:
            rows -= 1
            payload = msgpack.packb(["join", [[1] * width] * rows])
        if len(payload) <= PRESEAT_MAX_BYTES and len(payload) > len(best):
            best = payload
    return best


async def _flood_greetings(code: str, seconds: float) -> None:
    """(Child process) send costly greetings to the host over fresh links for `seconds`."""
    invite = Invite.from_text(code)
    ep, host = invite.addresses[0], PeerKey(invite.host_key)
    payload = _costliest_greeting()
    sent = 0

    async def loop(n: int) -> None:
        nonlocal sent
        me = Identity.generate(f"flood{n}")
        deadline = trio.current_time() + seconds
        while trio.current_time() < deadline:
            try:
                link = await connect(
                    ep.host,
                    ep.port,
                    me,
                    room_secret=invite.room_secret,
                    table_id=invite.table_id,
                    expected_peer=host,
                )
            except LinkError:
                await trio.sleep(0.01)
                continue
            with contextlib.suppress(LinkError):
                await link._send_frame(KIND_DATA, payload)
                sent += 1
                with trio.move_on_after(1):
                    await link.receive()
            await link.aclose()

    async with trio.open_nursery() as nursery:
        for n in range(FLOOD_TASKS):
            nursery.start_soon(loop, n)
    print(json.dumps({"greetings": sent}), flush=True)


async def _pending_joiners(code: str, count: int, hold: float) -> None:
    """(Child process) `count` join requests, from many loopback addresses, held open."""
    invite = Invite.from_text(code)
    ep, host = invite.addresses[0], PeerKey(invite.host_key)
    asked = 0

    async def one(n: int) -> None:
        nonlocal asked
        try:
            stream = await trio.open_tcp_stream(
                ep.host, ep.port, local_address=f"127.0.3.{1 + n % JOINER_SOURCES}"
            )
            link = await handshake(
                stream,
                Identity.generate(f"j{n}"),
                room_secret=invite.room_secret,
                table_id=invite.table_id,
                initiator=True,
                expected_peer=host,
            )
            await link.send(["join", {"addrs": []}])
            asked += 1
            with trio.move_on_after(hold):
                await link.receive()
            await link.aclose()
        except (LinkError, OSError):
            return

    async with trio.open_nursery() as nursery:
        for n in range(count):
            nursery.start_soon(one, n)
        await trio.sleep(hold / 2)
        print(json.dumps({"asked": asked}), flush=True)


async def _child(args: list[str]) -> trio.Process:
    return await trio.lowlevel.open_process(
        [sys.executable, __file__, *args], stdout=subprocess.PIPE, stdin=subprocess.DEVNULL
    )


async def _read_json(proc: trio.Process) -> dict[str, Any]:
    assert proc.stdout is not None
    data = b""
    while b"\n" not in data:
        chunk = await proc.stdout.receive_some(4096)
        if not chunk:
            break
        data += chunk
    result: dict[str, Any] = json.loads(data.split(b"\n", 1)[0] or b"{}")
    return result


async def _hostile_heartbeat(seconds: float) -> dict[str, float]:
    """Round trips of a seated peer while another process floods the host with greetings."""
    ids = [Identity.generate(n) for n in ("ana", "bia")]
    async with host_table(ids[0]) as host, join_table(ids[1], host.invite) as bia:
        samples: list[float] = []
        async with trio.open_nursery() as nursery:

            async def echo() -> None:
                while True:
                    peer, message = await host.receive()
                    await host.send(peer, message)

            nursery.start_soon(echo)

            async def pings(until: float, into: list[float]) -> None:
                while trio.current_time() < until:
                    start = time.perf_counter()
                    await bia.send(host.me, len(into))
                    await bia.receive()
                    into.append((time.perf_counter() - start) * 1000)
                    await trio.sleep(0.02)

            quiet: list[float] = []
            await pings(trio.current_time() + 2.0, quiet)
            flood = await _child(["--flood-greetings", host.invite.to_text(), str(seconds)])
            await trio.sleep(0.5)  # let the flood get going
            await pings(trio.current_time() + seconds - 1.0, samples)
            report = await _read_json(flood)
            await flood.wait()
            nursery.cancel_scope.cancel()
        return {
            "hostile_heartbeat_p99_ms": round(_p99(samples), 3),
            "quiet_heartbeat_p99_ms": round(_p99(quiet), 3),
            "hostile_greetings_per_s": round(report.get("greetings", 0) / seconds, 1),
        }


def _p99(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


async def _pending_join_fds() -> dict[str, int]:
    """The host's descriptors while 300 join requests wait for an answer that never comes."""

    async def never(request: JoinRequest) -> bool:
        await trio.sleep_forever()
        raise AssertionError("unreachable")

    async with host_table(Identity.generate("ana"), approve=never) as host:
        idle = _open_fds()
        joiners = await _child(["--pending-joiners", host.invite.to_text(), str(JOINERS)])
        report = await _read_json(joiners)
        fds = _open_fds()
        joiners.kill()
        await joiners.wait()
        return {
            "pending_join_fds": fds,
            "idle_host_fds": idle,
            "pending_join_requests_sent": int(report["asked"]),
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--handshakes", type=int, default=200)
    parser.add_argument("--messages", type=int, default=20000)
    parser.add_argument("--rounds", type=int, default=1000, help="broadcasts to time")
    parser.add_argument("--relay-messages", type=int, default=3000)
    parser.add_argument("--no-mesh", action="store_true", help="skip the table benchmarks")
    parser.add_argument("--no-hostile", action="store_true", help="skip the attack benchmarks")
    parser.add_argument("--hostile-seconds", type=float, default=6.0)
    parser.add_argument("--flood-greetings", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--pending-joiners", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.flood_greetings:
        trio.run(_flood_greetings, args.flood_greetings[0], float(args.flood_greetings[1]))
        return
    if args.pending_joiners:
        trio.run(_pending_joiners, args.pending_joiners[0], int(args.pending_joiners[1]), 30.0)
        return

    times = trio.run(_handshakes, args.handshakes)
    result: dict[str, Any] = {
        "handshake_ms": round(statistics.median(times) * 1000, 3),
        "handshake_p90_ms": round(statistics.quantiles(times, n=10)[-1] * 1000, 3),
        "link_msgs_per_s": round(trio.run(_throughput, args.messages)),
    }
    if not args.no_mesh:
        result.update(trio.run(_mesh, args.rounds, args.relay_messages))
    if not args.no_hostile:
        result.update(trio.run(_hostile_heartbeat, args.hostile_seconds))
        result.update(trio.run(_pending_join_fds))
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
