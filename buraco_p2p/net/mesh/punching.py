"""Punching between joiners, with the host as the coordinator (docs/protocol.md 2.11).

Two joiners behind cone NATs cannot dial each other: each router drops what nobody inside
asked for. The host can reach both, so it does what a rendezvous server does in ICE or
libp2p's DCUtR, over the links it already has:

- it tells each joiner the address:port it sees the joiner's link come from (`seen`): behind
  an endpoint-independent NAT that is the joiner's public address for its listening port,
  because a joiner dials the host from that port (`dialing.py`), so joiners need no STUN;
- it measures its round trip to each of the two (`ping`/`pong`), and sends both a `punch`
  naming the other joiner and that joiner's candidates (the observed address first, then the
  addresses of its roster entry), the word to the nearer one delayed by half the difference
  of the round trips (`punch.start_delays`), so both dial at the same moment;
- each joiner then dials every candidate from its listening port for a short window
  (`punch.simultaneous_open`); the first connection that opens carries the usual mesh
  handshake, the higher seat the initiator as for any mesh link (2.7). A SYN from the peer
  that lands between two of our attempts finds no connecting socket, only the listener on
  the same port, and the kernel hands the listener the connection: that accepted stream is
  the punch too (`claim_accepted`), or both sides would wait to answer a handshake.

A pair that cannot punch (a random NAT on either side) stays on the relay through the host,
end-to-end encrypted as before; the host tries again, with a backoff, while that pair's
relayed channel carries traffic. The host only coordinates a pair where it sees at least one
of the two at an address it does not advertise (it is behind a NAT): on a LAN the plain dial
works; or a pair already on the relay where one is on IPv6 beyond one network, whose router
may keep a stateful firewall (no NAT) that drops the plain dial but lets a punch through.

A joiner checks a `punch` in full before it dials anything: the peer must hold a seat (not
the host's, not ours), and every candidate must be a unicast address of family 4 or 6 that is
not unspecified, loopback, link-local, multicast, broadcast or reserved, with a port in
1..65535; at most 8 candidates, one punch per peer at a time. So a host can make a joiner
send SYNs only to a few addresses named for a seated peer, for a few seconds.
"""

from __future__ import annotations

import contextlib
import ipaddress
import secrets
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import trio

from buraco_p2p.net.channel.errors import LinkError, MeshError, NetError
from buraco_p2p.net.channel.identity import PeerKey
from buraco_p2p.net.channel.link import handshake, stream_address
from buraco_p2p.net.reach.candidates import outside_ips
from buraco_p2p.net.reach.invite import Endpoint, InviteError
from buraco_p2p.net.reach.punch import PunchError, simultaneous_open, start_delays
from buraco_p2p.net.reach.turnwire import connect_tcp
from buraco_p2p.net.table.table import mesh_message

if TYPE_CHECKING:
    from buraco_p2p.net.mesh.core import MeshCore

__all__ = [
    "HOST_PUNCH_TAGS",
    "JOINER_PUNCH_TAGS",
    "MAX_PUNCH_CANDIDATES",
    "Punch",
    "PunchRecordError",
    "Punches",
    "check_candidate",
    "parse_punch_record",
]

SEEN, PING, PONG, PUNCH = "seen", "ping", "pong", "punch"
# Records the host sends a joiner, and the one a joiner sends the host.
HOST_PUNCH_TAGS = frozenset({SEEN, PING, PUNCH})
JOINER_PUNCH_TAGS = frozenset({PONG})
MAX_PUNCH_CANDIDATES = 8
# How long the host waits for a pong before it gives up coordinating that pair this time.
PING_TIMEOUT = 2.0


class PunchRecordError(MeshError):
    """A `seen`, `ping`, `pong` or `punch` record of the wrong shape, or a refused candidate."""


def check_candidate(ep: Endpoint, who: str) -> Endpoint:
    """`ep` if a joiner may dial it on the host's word; `PunchRecordError` otherwise."""
    ip = ep.ip
    bad = (
        "unspecified" if ip.is_unspecified
        else "loopback" if ip.is_loopback
        else "link-local" if ip.is_link_local
        else "multicast" if ip.is_multicast
        else "broadcast" if ip == ipaddress.IPv4Address("255.255.255.255")
        else "reserved" if ip.is_reserved
        else None
    )  # fmt: skip
    if bad is not None:
        raise PunchRecordError(f"{who} named a {bad} address as a candidate: {ep}")
    return ep


def _endpoint(value: Any, who: str, *, dialed: bool = True) -> Endpoint:
    if (
        not isinstance(value, list)
        or len(value) != 2
        or not isinstance(value[0], str)
        or len(value[0]) > 64
        or not isinstance(value[1], int)
        or isinstance(value[1], bool)
    ):
        raise PunchRecordError(f"{who} sent a malformed address")
    if "%" in value[0]:  # a zone id names an interface of the sender's machine (2.10)
        raise PunchRecordError(f"{who} sent an address with a zone id")
    try:
        ep = Endpoint.parse(value[0], value[1])
    except (InviteError, ValueError):
        raise PunchRecordError(f"{who} sent an address that does not parse") from None
    return check_candidate(ep, who) if dialed else ep


_LOCAL_V6 = tuple(ipaddress.ip_network(n) for n in ("fc00::/7", "fe80::/10", "::1/128"))


def _local_v6(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    """A unique-local, link-local or loopback IPv6 address: it leads nowhere outside."""
    return any(ip in net for net in _LOCAL_V6)


def endpoint_wire(ep: Endpoint) -> list[Any]:
    """An address as `[ip_text, port]`, the form of the join greeting's `addrs` (2.10)."""
    return [str(ep.ip), ep.port]


@dataclass(frozen=True)
class Punch:
    """The host's word: dial `peer` at `candidates` now."""

    peer: PeerKey
    candidates: tuple[Endpoint, ...]


@dataclass(frozen=True)
class Seen:
    address: Endpoint


@dataclass(frozen=True)
class Ping:
    nonce: int
    pong: bool


def parse_punch_record(msg: Any, who: str) -> Punch | Seen | Ping:
    """One of this module's records, checked in full (shape, ranges, every candidate)."""
    tag = msg[0] if isinstance(msg, list) and msg else None
    if tag in (PING, PONG):
        nonce = msg[1] if len(msg) == 2 else None
        if not isinstance(nonce, int) or isinstance(nonce, bool) or not 0 <= nonce < 2**32:
            raise PunchRecordError(f"{who} sent a malformed {tag} record")
        return Ping(nonce, tag == PONG)
    if tag == SEEN:
        if len(msg) != 2:
            raise PunchRecordError(f"{who} sent a malformed seen record")
        return Seen(_endpoint(msg[1], who, dialed=False))  # shown, never dialed
    if tag == PUNCH:
        if (
            len(msg) != 3
            or not isinstance(msg[1], bytes)
            or not isinstance(msg[2], list)
            or not 1 <= len(msg[2]) <= MAX_PUNCH_CANDIDATES
        ):
            raise PunchRecordError(f"{who} sent a malformed punch record")
        try:
            peer = PeerKey(msg[1])
        except ValueError as exc:
            raise PunchRecordError(f"{who} sent a punch record for a bad key: {exc}") from None
        candidates = tuple(dict.fromkeys(_endpoint(v, who) for v in msg[2]))
        return Punch(peer, candidates)
    raise PunchRecordError(f"{who} sent an unknown punch record")


def punch_message(peer: PeerKey, candidates: Sequence[Endpoint]) -> list[Any]:
    return [PUNCH, peer.raw, [endpoint_wire(ep) for ep in candidates[:MAX_PUNCH_CANDIDATES]]]


def parse_observed(address: str | None) -> Endpoint | None:
    """A link's remote "host:port" (`link.stream_address`) as an endpoint, if it is one."""
    if not address or ":" not in address:
        return None
    host, _, port = address.rpartition(":")
    try:
        # Without its zone id: what we send of it (`seen`) carries none (docs/protocol.md 2.10).
        return Endpoint.parse(host.strip("[]").split("%", 1)[0], int(port))
    except (InviteError, ValueError):
        return None


class Punches:
    """One mesh's part in punching: the coordinator on the host, the puncher on a joiner."""

    def __init__(self, mesh: MeshCore) -> None:
        self.mesh = mesh
        # Host: where each joiner's link comes from; the pairs being coordinated; backoff.
        self.observed: dict[PeerKey, Endpoint] = {}
        self._busy: set[frozenset[PeerKey]] = set()
        self._next_at: dict[frozenset[PeerKey], float] = {}
        self._wait: dict[frozenset[PeerKey], float] = {}
        self._pings: dict[int, tuple[PeerKey, float, trio.Event, list[float]]] = {}
        # Host: coordinations started so far, in all and per pair (figures for tests).
        self.coordinated = 0
        self.tries: Counter[frozenset[PeerKey]] = Counter()
        # Joiner: our address as the host sees it; the peers we are punching to right now;
        # the candidates being dialed, each with what takes a connection accepted from it.
        self.seen: Endpoint | None = None
        self._punching: set[PeerKey] = set()
        self._awaited: dict[Endpoint, Callable[[trio.SocketStream], bool]] = {}

    # -- host ------------------------------------------------------------------------------

    def link_up(self, key: PeerKey, address: str | None) -> None:
        """Host: a joiner's link resumed. Tell it where we see it; pair it with the others."""
        mesh = self.mesh
        observed = parse_observed(address)
        if address is not None and address in mesh.reflexive_behind_relay:
            # We dialed the joiner's TURN relay: its link comes from the relay, no punch
            # target; the joiner's STUN server saw it here (its reply code, 2.12).
            observed = mesh.reflexive_behind_relay[address]
        elif observed is not None and mesh.turn_addresses.get(str(observed)) == observed.ip:
            observed = None  # a relayed candidate we dialed: the TURN server's address
        if observed is None:
            return
        self.observed[key] = observed
        run = mesh.live_run_or_none(key)
        if run is not None:
            mesh.enqueue(run, [SEEN, endpoint_wire(observed)])
        for other in mesh.peers():
            if other != key and mesh.is_up(other):
                self.pair(key, other)

    def relayed(self, a: PeerKey, b: PeerKey) -> None:
        """Host: `a` opened, or sent on, a relayed channel to `b`: they have no direct link.

        Called for every relayed chunk, so a punch that failed (a SYN lost, a pong late on a
        busy machine) is tried again after its backoff for as long as the pair needs the
        relay, not only when a channel opens; `pair` makes all but those calls cheap. A pair
        on the relay is punched also where neither is behind a NAT but one is on IPv6 outside
        its own network: a stateful firewall drops the plain dial there, not a punch."""
        self.pair(a, b, relayed=True)

    def pair(self, a: PeerKey, b: PeerKey, *, relayed: bool = False) -> None:
        """Host: time a punch between joiners `a` and `b`, unless one is under way, the
        pair's backoff has not run out, or they need none (`relayed`: they are on the
        relay, so the plain dial did not get through)."""
        mesh = self.mesh
        pair = frozenset((a, b))
        if (
            not mesh.config.punch_peers
            or len(pair) != 2
            or pair in self._busy
            or trio.current_time() < self._next_at.get(pair, 0.0)
            or not self._wanted(a, b, relayed=relayed)
        ):
            return
        self._busy.add(pair)
        mesh.nursery.start_soon(self._coordinate, a, b, pair)

    def _behind_nat(self, key: PeerKey) -> bool:
        """We see `key` at an address its roster entry does not list."""
        seen = self.observed.get(key)
        member = self.mesh.roster.member(key) if self.mesh.roster is not None else None
        if seen is None or member is None:
            return False
        return all(ep.ip != seen.ip for ep in member.addresses)

    def _firewalled_v6(self, key: PeerKey) -> bool:
        """We see `key` on IPv6 at an address outside any one network (no NAT, but maybe a
        router's stateful firewall that drops connections nobody inside asked for)."""
        seen = self.observed.get(key)
        return seen is not None and seen.ip.version == 6 and not _local_v6(seen.ip)

    def _wanted(self, a: PeerKey, b: PeerKey, *, relayed: bool = False) -> bool:
        mesh = self.mesh
        hook = mesh.config.refuse_direct
        if hook is not None and (hook(a, b) or hook(b, a)):
            return False
        if mesh.seat_of(a) <= 0 or mesh.seat_of(b) <= 0:
            return False
        if a not in self.observed or b not in self.observed:
            return False
        if relayed and (self._firewalled_v6(a) or self._firewalled_v6(b)):
            return True
        return self._behind_nat(a) or self._behind_nat(b)

    def candidates(self, key: PeerKey) -> list[Endpoint]:
        """What the host tells others about `key`: where it sees it, then its roster entry."""
        mesh = self.mesh
        found: list[Endpoint] = []
        seen = self.observed.get(key)
        member = mesh.roster.member(key) if mesh.roster is not None else None
        # A relayed (TURN) candidate is no punch target: it is dialed, after the punch (2.14).
        relayed = member.relayed() if member else ()
        for ep in ([seen] if seen else []) + list(member.addresses if member else ()):
            if ep in relayed:
                continue
            try:
                check_candidate(ep, "host")
            except PunchRecordError:
                continue
            if ep not in found:
                found.append(ep)
        return found[:MAX_PUNCH_CANDIDATES]

    async def _coordinate(self, a: PeerKey, b: PeerKey, pair: frozenset[PeerKey]) -> None:
        mesh = self.mesh
        try:
            self.coordinated += 1
            self.tries[pair] += 1
            rtts: dict[PeerKey, float] = {}
            async with trio.open_nursery() as nursery:
                for key in (a, b):
                    nursery.start_soon(self._measure, key, rtts)
            if len(rtts) != 2:
                return
            to_a, to_b = self.candidates(b), self.candidates(a)
            if not to_a or not to_b:
                return
            delays = start_delays(rtts[a], rtts[b])
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self._tell, a, b, to_a, delays.first)
                nursery.start_soon(self._tell, b, a, to_b, delays.second)
        except NetError as exc:
            mesh.reject("punch coordination", exc)
        finally:
            wait = self._wait.get(pair, mesh.config.direct_retry_min)
            self._next_at[pair] = trio.current_time() + wait
            self._wait[pair] = min(wait * 2, mesh.config.direct_retry_max)
            self._busy.discard(pair)

    async def _measure(self, key: PeerKey, rtts: dict[PeerKey, float]) -> None:
        """The round trip to `key` over its link (queueing included, as the word will be)."""
        mesh = self.mesh
        nonce = secrets.randbelow(2**32)
        while nonce in self._pings:  # pragma: no cover - 2^-32
            nonce = secrets.randbelow(2**32)
        done: list[float] = []
        event = trio.Event()
        self._pings[nonce] = (key, trio.current_time(), event, done)
        try:
            await mesh.send_control(key, [PING, nonce])
            with trio.move_on_after(PING_TIMEOUT):
                await event.wait()
                rtts[key] = done[0]
        except MeshError:
            return
        finally:
            self._pings.pop(nonce, None)

    async def _tell(
        self, to: PeerKey, peer: PeerKey, candidates: list[Endpoint], delay: float
    ) -> None:
        await trio.sleep(delay)
        await self.mesh.send_control(to, punch_message(peer, candidates))

    def _on_pong(self, sender: PeerKey, nonce: int) -> None:
        pending = self._pings.get(nonce)
        if pending is None or pending[0] != sender:
            return  # late, or not ours to answer: ignored
        pending[3].append(trio.current_time() - pending[1])
        pending[2].set()

    # -- joiner ----------------------------------------------------------------------------

    async def on_record(self, sender: PeerKey, msg: Any, who: str) -> None:
        """One of this module's records from the link with `sender` (the tags were checked)."""
        mesh = self.mesh
        record = parse_punch_record(msg, who)
        if isinstance(record, Ping):
            if record.pong:
                self._on_pong(sender, record.nonce)
            else:
                await mesh.send_control(sender, [PONG, record.nonce])
        elif isinstance(record, Seen):
            self.seen = record.address
        else:
            self._on_punch(record, who)

    def _on_punch(self, punch: Punch, who: str) -> None:
        mesh = self.mesh
        peer = punch.peer
        member = mesh.roster.member(peer) if mesh.roster is not None else None
        if member is None or member.seat == 0 or peer == mesh.me:
            mesh.reject(who, MeshError(f"{who} asked for a punch to a peer not seated here"))
            return
        relay = mesh.turn
        if relay is not None and not relay.closed.is_set():
            # Where the host sees the peer: it dials our relayed candidate from there if
            # the punch fails (2.14). Only public IPs: never one inside a network.
            relay.want(outside_ips(punch.candidates))
        if (
            peer in self._punching
            or mesh.listen_port is None
            or mesh.direct_refused(peer)
            or mesh.is_direct(peer)  # a link through a relay, the host's or TURN, is not
        ):
            return
        self._punching.add(peer)
        mesh.nursery.start_soon(self._punch, peer, punch.candidates)

    async def _punch(self, peer: PeerKey, candidates: tuple[Endpoint, ...]) -> None:
        mesh = self.mesh
        stream: trio.abc.Stream | None = None
        address: str | None = None
        try:
            with self._waiting_on_our_relay(peer, candidates) as relayed_in:
                punched = await self._first_open(candidates)
                if punched is not None:
                    stream, address = punched, stream_address(punched)
                    if address is not None:
                        mesh.punched.add(address)
                elif relayed_in is not None:
                    stream, address = await self._take_relayed(relayed_in)
                else:
                    stream, address = await self._dial_their_relay(peer)
        finally:
            self._punching.discard(peer)
        if stream is None:
            return
        if mesh.server is None or not mesh.wants_link(peer):
            await trio.aclose_forcefully(stream)
            return
        if mesh.seat_of(mesh.me) < mesh.seat_of(peer):
            # The higher seat is the initiator; its handshake arrives on this stream.
            await mesh.server.handle_stream(stream)
            return
        try:
            link = await handshake(
                stream, mesh.identity, room_secret=mesh.mesh_secret, table_id=mesh.table_id,
                initiator=True, expected_peer=peer, timeout=mesh.config.handshake_timeout,
                address=address,
            )  # fmt: skip
            await link.send(mesh_message())
        except LinkError as exc:
            mesh.reject(address or "punch", exc)
            return
        await mesh.run_link(peer, link, relayed=False)

    # -- a pair that cannot punch, and a TURN relay on one side (2.14) ----------------------

    def _relay_roles(self, peer: PeerKey) -> tuple[bool, Endpoint | None]:
        """(whether the peer dials our relayed candidate, which of the peer's we dial).

        Whoever holds a relayed candidate in the roster can be dialed at it; where both do,
        the higher seat dials the lower's, as in 2.7."""
        mesh = self.mesh
        roster = mesh.roster
        relay = mesh.turn
        me = roster.member(mesh.me) if roster is not None else None
        them = roster.member(peer) if roster is not None else None
        if me is None or them is None:
            return False, None
        ours = (relay is not None and not relay.closed.is_set()
                and relay.relayed is not None and relay.relayed in me.relayed())  # fmt: skip
        theirs = them.relayed()[0] if them.relayed() else None
        if theirs is not None and (not ours or them.seat < me.seat):
            return False, theirs
        return ours, None

    @contextlib.contextmanager
    def _waiting_on_our_relay(
        self, peer: PeerKey, candidates: tuple[Endpoint, ...]
    ) -> Iterator[trio.MemoryReceiveChannel[trio.abc.Stream] | None]:
        """While we punch, and after, a connection through our relay from where the host
        sees `peer` is that peer dialing our relayed candidate: it is this pair's stream."""
        mesh = self.mesh
        waited, _ = self._relay_roles(peer)
        if not waited:
            yield None
            return
        send, receive = trio.open_memory_channel[trio.abc.Stream](1)
        ips = [ip for ip in outside_ips(candidates) if ip not in mesh.turn_waiting]
        for ip in ips:
            mesh.turn_waiting[ip] = send
        try:
            yield receive
        finally:
            for ip in ips:
                if mesh.turn_waiting.get(ip) is send:
                    del mesh.turn_waiting[ip]
            send.close()

    async def _take_relayed(
        self, relayed_in: trio.MemoryReceiveChannel[trio.abc.Stream]
    ) -> tuple[trio.abc.Stream | None, str | None]:
        """The peer's connection through our relay, if it comes within a punch window."""
        with trio.move_on_after(self.mesh.config.punch_window):
            stream = await relayed_in.receive()
            peer_at = getattr(stream, "peer", None)
            return stream, str(peer_at) if peer_at is not None else None
        return None, None

    async def _dial_their_relay(self, peer: PeerKey) -> tuple[trio.abc.Stream | None, str | None]:
        """A plain TCP connection to the peer's relayed candidate, tried for a punch window
        (its permission for our IP is made as the host's punch record reaches it)."""
        mesh = self.mesh
        _, theirs = self._relay_roles(peer)
        if theirs is None:
            return None, None
        mesh.turn_addresses[str(theirs)] = theirs.ip
        deadline = trio.current_time() + mesh.config.punch_window
        while True:
            try:
                with trio.fail_after(max(0.1, deadline - trio.current_time())):
                    return await connect_tcp(theirs), str(theirs)
            except (OSError, trio.TooSlowError) as exc:
                if trio.current_time() >= deadline:
                    mesh.reject(str(theirs), PunchError(f"its relayed candidate: {exc}"))
                    return None, None
            await trio.sleep(0.5)

    def claim_accepted(self, stream: trio.SocketStream) -> bool:
        """Listener: take a connection from a candidate being punched as that punch's stream.

        While our attempt socket is closed between two tries, the peer's SYN to our port
        reaches the listener sharing it; the peer's connect then succeeds and it holds the
        punched stream, so ours is this accepted one, whichever side it lands on."""
        remote = parse_observed(stream_address(stream))
        take = self._awaited.get(remote) if remote is not None else None
        return take is not None and take(stream)

    async def _first_open(self, candidates: tuple[Endpoint, ...]) -> trio.SocketStream | None:
        """Dial every candidate at once from our listening port; the first that opens,
        or the first connection the listener accepts from one of them meanwhile."""
        mesh = self.mesh
        assert mesh.listen_port is not None
        port = mesh.listen_port
        won: list[trio.SocketStream] = []
        errors: list[str] = []
        scope = trio.CancelScope()

        def take(stream: trio.SocketStream) -> bool:
            if won:
                return False  # already punched: a new link for the listener to greet
            won.append(stream)
            scope.cancel()
            return True

        async def one(ep: Endpoint) -> None:
            try:
                stream = await simultaneous_open(port, ep, window=mesh.config.punch_window)
            except PunchError as exc:
                errors.append(str(exc))
                return
            if not take(stream):
                await trio.aclose_forcefully(stream)

        waiting = [ep for ep in candidates if ep not in self._awaited]
        for ep in waiting:
            self._awaited[ep] = take
        try:
            with scope:
                async with trio.open_nursery() as nursery:
                    for ep in candidates:
                        nursery.start_soon(one, ep)
        except BaseException:
            for stream in won:  # the mesh is closing: nobody will run this link
                stream.socket.close()
            raise
        finally:
            for ep in waiting:
                if self._awaited.get(ep) is take:
                    del self._awaited[ep]
        if not won:
            mesh.reject("punch", PunchError("; ".join(errors) or "no candidate opened"))
            return None
        return won[0]
