"""TCP hole punching: two peers behind NATs open one connection by dialing each other at once.

A home router drops a connection attempt nobody inside asked for. If both peers send a SYN to
each other's public address:port at about the same moment, each router has already seen its
own peer's outgoing SYN when the other one's arrives, takes it for the answer, and lets it in;
TCP's simultaneous open (RFC 9293 section 3.5) then makes one connection of the two attempts.
This needs each NAT to reuse, for the peer, the public port a STUN server saw for the same
local port (an endpoint-independent mapping), which is why both sides punch from the port
they asked STUN about, bound with SO_REUSEADDR and SO_REUSEPORT.

Timing (as libp2p's DCUtR): a coordinator that has measured its round trip to each side tells
both to start; it delays the word to the nearer side by half the difference of the round
trips, so both hear it at the same moment (`start_delays`). Each side then keeps dialing
for `window` seconds: a SYN that reaches the other router too early is dropped silently, and
the next one gets through once the other side has sent its own.
"""

from __future__ import annotations

import errno
import socket
from collections.abc import Sequence
from dataclasses import dataclass

import trio

from buraco_p2p.net.channel.errors import NetError
from buraco_p2p.net.reach.invite import Endpoint

# How long one SYN may wait for an answer before the next attempt from the same port.
ATTEMPT_TIMEOUT = 0.5


class PunchError(NetError):
    """No connection was made to the peer within the punching window."""


async def reusable_socket(
    family: int, local_port: int = 0, local_host: str = ""
) -> trio.socket.SocketType:
    """A TCP socket bound to `local_port` that other sockets may share (STUN, then punching)."""
    sock = trio.socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    if family == socket.AF_INET6:
        sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
    await sock.bind((local_host or ("::" if family == socket.AF_INET6 else "0.0.0.0"), local_port))
    return sock


def share_listening_port(listeners: Sequence[trio.SocketListener]) -> None:
    """Let STUN and punching sockets bind the listeners' port (SO_REUSEPORT, same user only).

    A STUN answer is only worth advertising for the port joiners will dial, so the probe has
    to leave from the listening port itself.
    """
    for listener in listeners:
        listener.socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)


@dataclass(frozen=True)
class StartDelays:
    """How long the coordinator waits before telling each side to dial (seconds)."""

    first: float
    second: float


def start_delays(rtt_first: float, rtt_second: float) -> StartDelays:
    """Delays that make both sides hear "dial now" together: half the round-trip difference.

    The word to a side arrives half its round trip after it is sent, so the side nearer the
    coordinator is told later by half the difference.
    """
    if rtt_first < 0 or rtt_second < 0:
        raise ValueError("round trips are not negative")
    half = abs(rtt_first - rtt_second) / 2
    if rtt_first >= rtt_second:
        return StartDelays(0.0, half)
    return StartDelays(half, 0.0)


async def simultaneous_open(
    local_port: int,
    remote: Endpoint,
    *,
    window: float = 5.0,
    local_host: str = "",
) -> trio.SocketStream:
    """Dial `remote` from `local_port` again and again for `window` seconds; the first success.

    The other side does the same toward us. Refusals (a RST from a router or host) and
    timeouts are retried from the same port until the window closes.
    """
    family = socket.AF_INET6 if remote.ip.version == 6 else socket.AF_INET
    last = "no attempt finished"
    with trio.move_on_after(window):
        while True:
            sock = await reusable_socket(family, local_port, local_host)
            opened = False
            try:
                with trio.move_on_after(ATTEMPT_TIMEOUT):
                    await sock.connect((remote.host, remote.port))
                    opened = True
                    return trio.SocketStream(sock)
                last = "timed out"
            except OSError as exc:
                last = exc.strerror or str(exc)
                if exc.errno not in (errno.ECONNREFUSED, errno.ECONNRESET, errno.ETIMEDOUT,
                                     errno.EHOSTUNREACH, errno.ENETUNREACH, errno.EADDRNOTAVAIL):
                    raise PunchError(f"cannot punch to {remote}: {last}") from exc
            finally:
                if not opened:  # also when cancelled: another candidate won
                    sock.close()
            # A refusal comes back at once: pace the retries like a timeout would.
            await trio.sleep(0.05)
    raise PunchError(f"no connection to {remote} within {window:g} s ({last})")
