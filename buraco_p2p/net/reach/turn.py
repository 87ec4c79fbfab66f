"""TURN over TCP with TCP allocations (RFC 8656, RFC 6062): a relayed address for a peer
that nobody can dial otherwise.

A peer behind a NAT that gives every destination a new port (mobile hotspots, carrier-grade
NATs) cannot be punched and has no port mapping. A TURN server the user names (`--turn
USER:PASSWORD@IP:PORT`) lends it a port of its own, the *relayed address*: a plain TCP
connection a peer opens to that address is forwarded to us over a fresh connection we open
to the server. The bytes are those of our usual secure handshake and frames, so the server
relays ciphertext it cannot read or forge.

The flow, as the client speaks it (all on one TCP *control* connection unless said):

1. Allocate with REQUESTED-TRANSPORT 6 (TCP). The server answers 401 with REALM and NONCE;
   we repeat the request with USERNAME, REALM, NONCE and MESSAGE-INTEGRITY under the
   long-term key MD5(user ":" realm ":" password) (RFC 8489 section 9.2). A 438 (stale
   nonce) is retried once with the new NONCE. The success carries XOR-RELAYED-ADDRESS (the
   relayed address), XOR-MAPPED-ADDRESS (our own public address as the server sees it) and
   LIFETIME.
2. CreatePermission with one XOR-PEER-ADDRESS per peer IP we expect: the server forwards a
   connection to the relayed address only from a permitted IP (RFC 6062 section 5.3).
3. Every `refresh` seconds: Refresh (LIFETIME) and CreatePermission again for every
   permitted IP (a permission lasts 300 s), while the allocation is in use.
4. A peer connects: the server sends a ConnectionAttempt indication with CONNECTION-ID and
   the peer's XOR-PEER-ADDRESS; we open a new TCP connection to the server and send
   ConnectionBind with that CONNECTION-ID (authenticated as above). After its success the
   connection is a plain byte pipe to the peer (`TurnStream`).
5. At the end: Refresh with LIFETIME 0, which releases the allocation at once.

Every byte from the server is untrusted: a response is taken only for a transaction we
opened, a success only with a MESSAGE-INTEGRITY our key produced, and anything else ends
the relay with a `TurnError` naming the server. A relay that fails or is closed by the
server ends (`TurnRelay.failure` says why); it never takes the caller's tasks with it.
"""

from __future__ import annotations

import secrets
import struct
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager

import trio

from buraco_p2p.net.reach.invite import Endpoint, IPAddress
from buraco_p2p.net.reach.stun import (
    ERROR,
    INDICATION,
    REQUEST,
    SUCCESS,
    StunError,
    StunMessage,
    StunReader,
    attribute,
    class_of,
    error_code,
    integrity_holds,
    message_type,
    method_of,
    parse_xor_address,
    xor_address,
)
from buraco_p2p.net.reach.turnwire import (
    ALLOCATE,
    ATTR_CONNECTION_ID,
    ATTR_LIFETIME,
    ATTR_NONCE,
    ATTR_REALM,
    ATTR_REQUESTED_TRANSPORT,
    ATTR_XOR_MAPPED_ADDRESS,
    ATTR_XOR_PEER_ADDRESS,
    ATTR_XOR_RELAYED_ADDRESS,
    CONNECTION_ATTEMPT,
    CONNECTION_BIND,
    CREATE_PERMISSION,
    MAX_BINDING,
    MAX_REALM_OR_NONCE,
    MAX_TURN_MESSAGE,
    MAX_WAITING,
    REFRESH,
    TRANSPORT_TCP,
    Attrs,
    Refused,
    TurnError,
    TurnServer,
    TurnStream,
    before_integrity,
    connect_tcp,
    long_term_key,
    not_understood,
    os_reason,
    signed_request,
    why,
)

__all__ = ["TurnError", "TurnRelay", "TurnServer", "TurnStream", "open_turn"]


class TurnRelay:
    """A live TCP allocation: `relayed` is the address peers dial; `incoming` yields their
    connections as `TurnStream`s. Made by `open_turn`."""

    def __init__(self, server: TurnServer, *, timeout: float) -> None:
        self.server = server
        self.timeout = timeout
        self.relayed: Endpoint | None = None
        self.mapped: Endpoint | None = None
        self.lifetime = 0
        self.permitted: set[IPAddress] = set()
        # IPs a caller that may not wait asked to permit (`want`); the relay's owner sends them.
        self.wanted: set[IPAddress] = set()
        self.wanted_changed = trio.Event()
        self.refreshes = 0
        self.released = False
        self.failure: TurnError | None = None
        self.closed = trio.Event()
        self._key = b""
        self._realm = b""
        self._nonce = b""
        self._stream: trio.SocketStream | None = None
        self._pending: dict[bytes, trio.MemorySendChannel[bytes]] = {}
        self._reader: StunReader | None = None
        self._lock = trio.Lock()
        self._binding = trio.CapacityLimiter(MAX_BINDING)
        self._in_send, self.incoming = trio.open_memory_channel[TurnStream](MAX_WAITING)

    # -- requests ------------------------------------------------------------------------

    def _fail(self, reason: str) -> TurnError:
        return TurnError(f"{self.server}: {reason}")

    def _signed(self, method: int, attrs: Attrs) -> tuple[bytes, bytes]:
        """(transaction, bytes) of an authenticated request; `attrs` is given the
        transaction, which XOR-PEER-ADDRESS of an IPv6 peer is xored with."""
        transaction = secrets.token_bytes(12)
        return transaction, signed_request(
            method, transaction, attrs(transaction), user=self.server.user, realm=self._realm,
            nonce=self._nonce, key=self._key,
        )  # fmt: skip

    def _answer(self, method: int, data: bytes, transaction: bytes) -> StunMessage:
        """The server's answer to our request, checked: a success needs our key's integrity;
        an error is raised as `Refused` with its code."""
        try:
            msg = StunMessage.from_bytes(data)
        except StunError as exc:
            raise self._fail(why(exc)) from None
        if msg.transaction != transaction or method_of(msg.kind) != method:
            raise self._fail("answered a request it was not asked")
        if class_of(msg.kind) == ERROR:
            code, reason = error_code(msg)
            realm, nonce = attribute(msg, ATTR_REALM), attribute(msg, ATTR_NONCE)
            if any(v is not None and len(v) > MAX_REALM_OR_NONCE for v in (realm, nonce)):
                # RFC 8489 sections 14.9, 14.10: fewer than 128 characters, 763 bytes at most
                raise self._fail(f"its REALM or NONCE is over {MAX_REALM_OR_NONCE} bytes")
            raise Refused(code, reason, realm, nonce)
        if class_of(msg.kind) != SUCCESS:
            raise self._fail(f"answered with a message of type {msg.kind:#06x}")
        if self._key:
            if not integrity_holds(data, self._key):
                raise self._fail("its answer's MESSAGE-INTEGRITY does not match our credentials")
            msg = StunMessage(msg.kind, msg.transaction, before_integrity(msg.attributes))
        unknown = not_understood(msg.attributes)
        if unknown is not None:
            raise self._fail(f"its answer holds attribute {unknown:#06x}, which a client must "
                             "understand (RFC 8489 section 6.3) and we do not")  # fmt: skip
        return msg

    async def _control_request(self, method: int, attrs: Attrs) -> StunMessage:
        """An authenticated request on the control connection; one retry on a stale nonce."""
        for attempt in (1, 2):
            transaction, data = self._signed(method, attrs)
            send, receive = trio.open_memory_channel[bytes](1)
            self._pending[transaction] = send
            try:
                assert self._stream is not None
                with trio.fail_after(self.timeout):
                    async with self._lock:
                        await self._stream.send_all(data)
                    reply = await receive.receive()
                return self._answer(method, reply, transaction)
            except Refused as exc:
                if exc.code == 438 and attempt == 1 and exc.nonce:
                    self._nonce = exc.nonce
                    continue
                raise self._fail(exc.words()) from None
            except trio.TooSlowError:
                raise self._fail(f"no answer within {self.timeout:g} s") from None
            except (trio.EndOfChannel, trio.BrokenResourceError, trio.ClosedResourceError):
                raise self.failure or self._fail("closed the connection") from None
            finally:
                del self._pending[transaction]
        raise AssertionError("unreachable")

    def want(self, ips: Iterable[IPAddress]) -> None:
        """Ask for `ips` to be permitted soon, without waiting: for a roster or a record that
        arrives where nothing may block. The relay's owner takes `wanted` and `permit`s it."""
        fresh = {ip for ip in ips if ip not in self.permitted} - self.wanted
        if fresh:
            self.wanted |= fresh
            self.wanted_changed.set()

    async def permit(self, ips: Iterable[IPAddress]) -> None:
        """Let connections from `ips` through to the relayed address (CreatePermission);
        kept by every refresh. `TurnError` if the server refuses. Only IPs of the relayed
        address's family can reach it (RFC 8656 section 10: 443 otherwise); others are left
        out."""
        family = self.relayed.ip.version if self.relayed is not None else 4
        wanted = {ip for ip in ips if ip.version == family}
        fresh = sorted(wanted - self.permitted, key=str)
        if not fresh:
            await trio.lowlevel.checkpoint()
            return
        await self._create_permission(fresh)
        self.permitted.update(fresh)

    async def _create_permission(self, ips: Iterable[IPAddress]) -> None:
        # The port of XOR-PEER-ADDRESS is ignored for permissions; 1 keeps it well formed.
        chosen = tuple(ips)
        await self._control_request(CREATE_PERMISSION, lambda tid: [
            (ATTR_XOR_PEER_ADDRESS, xor_address(Endpoint(ip, 1), tid)) for ip in chosen
        ])  # fmt: skip

    async def refresh(self, lifetime: int) -> None:
        """Refresh the allocation (LIFETIME `lifetime`) and every permission."""
        life = struct.pack(">I", lifetime)
        await self._control_request(REFRESH, lambda tid: [(ATTR_LIFETIME, life)])
        if self.permitted:
            await self._create_permission(sorted(self.permitted, key=str))
        self.refreshes += 1

    async def _release(self) -> None:
        """Refresh with LIFETIME 0: the server frees the allocation and its port at once.
        Read inline, the control reader having stopped; any failure is left unsaid (closing
        the control connection frees the allocation too)."""
        if self.failure is not None or self._stream is None or self._reader is None:
            return
        transaction, data = self._signed(REFRESH, lambda tid: [(ATTR_LIFETIME, b"\0" * 4)])
        try:
            await self._stream.send_all(data)
            while True:
                reply = await self._reader.message()
                if StunMessage.from_bytes(reply).transaction == transaction:
                    break
            self._answer(REFRESH, reply, transaction)
        except (Refused, TurnError, StunError, OSError, trio.BrokenResourceError):
            return
        self.released = True

    # -- the control connection ---------------------------------------------------------

    async def _allocate(self, lifetime: int) -> None:
        """Open the control connection and allocate (with the 401 round to learn the realm)."""
        ep = self.server.endpoint
        try:
            with trio.fail_after(self.timeout):
                self._stream = await connect_tcp(ep)
        except trio.TooSlowError:
            raise self._fail(f"cannot be reached: no answer within {self.timeout:g} s") from None
        except OSError as exc:
            raise self._fail(f"cannot be reached: {os_reason(exc)}") from None
        reader = self._reader = StunReader(self._stream, MAX_TURN_MESSAGE, str(self.server))
        transport = (ATTR_REQUESTED_TRANSPORT, struct.pack(">BBBB", TRANSPORT_TCP, 0, 0, 0))
        want = (ATTR_LIFETIME, struct.pack(">I", lifetime))
        first = StunMessage(message_type(ALLOCATE, REQUEST), secrets.token_bytes(12),
                            (transport, want))  # fmt: skip
        msg: StunMessage | None = None
        transaction = first.transaction
        for attempt in (0, 1, 2):
            data = first.to_bytes()
            if attempt:
                transaction, data = self._signed(ALLOCATE, lambda tid: [transport, want])
            try:
                with trio.fail_after(self.timeout):
                    await self._stream.send_all(data)
                    reply = await reader.message()
                msg = self._answer(ALLOCATE, reply, transaction)
                if not attempt:
                    raise self._fail("allocated without asking for credentials; refused as unsafe")
                break
            except Refused as exc:
                if attempt == 0 and exc.code == 401 and exc.realm and exc.nonce:
                    self._realm, self._nonce = exc.realm, exc.nonce
                    self._key = long_term_key(self.server.user, self._realm, self.server.password)
                    continue
                if attempt == 1 and exc.code == 438 and exc.nonce:
                    self._nonce = exc.nonce
                    continue
                raise self._fail(exc.words()) from None
            except trio.TooSlowError:
                raise self._fail(f"no answer within {self.timeout:g} s") from None
            except (StunError, OSError, trio.BrokenResourceError) as exc:
                raise self._fail(why(exc)) from None
        if msg is None:
            raise self._fail("refused our credentials twice over a stale nonce")
        relayed = attribute(msg, ATTR_XOR_RELAYED_ADDRESS)
        mapped = attribute(msg, ATTR_XOR_MAPPED_ADDRESS)
        life = attribute(msg, ATTR_LIFETIME)
        if relayed is None or life is None or len(life) != 4:
            raise self._fail("its allocation lacks a relayed address or a lifetime")
        try:
            self.relayed = parse_xor_address(relayed, transaction)
            self.mapped = parse_xor_address(mapped, transaction) if mapped else None
        except StunError as exc:
            raise self._fail(why(exc)) from None
        (self.lifetime,) = struct.unpack(">I", life)
        if self.lifetime == 0:
            raise self._fail("granted an allocation with a lifetime of 0 s")

    async def _read_control(self) -> None:
        """Route answers to their requests and ConnectionAttempts to `_bind`, until the
        connection ends; whatever ends it is kept in `failure`, never raised (binds under
        way end with it). A server that broke the protocol is hung up on at once: closing the
        control connection releases the allocation (the server deletes it)."""
        try:
            async with trio.open_nursery() as nursery:
                try:
                    await self._route(nursery)
                except TurnError as exc:
                    self.failure = self.failure or exc
                except (StunError, OSError, trio.BrokenResourceError) as exc:
                    self.failure = self.failure or self._fail(why(exc))
                except trio.ClosedResourceError:  # `_keep` closed it, its failure said
                    self.failure = self.failure or self._fail("closed the connection")
                nursery.cancel_scope.cancel()
            if self._stream is not None:
                await trio.aclose_forcefully(self._stream)
        finally:
            self.closed.set()
            for send in self._pending.values():
                send.close()
            self._in_send.close()

    async def _route(self, nursery: trio.Nursery) -> None:
        assert self._reader is not None
        while True:
            data = await self._reader.message()
            try:
                msg = StunMessage.from_bytes(data)
            except StunError as exc:
                raise self._fail(why(exc)) from None
            if class_of(msg.kind) == INDICATION:
                if (
                    method_of(msg.kind) == CONNECTION_ATTEMPT
                    and not_understood(msg.attributes) is None
                ):
                    cid = attribute(msg, ATTR_CONNECTION_ID)
                    peer = attribute(msg, ATTR_XOR_PEER_ADDRESS)
                    if cid is None or len(cid) != 4 or peer is None:
                        raise self._fail("sent a ConnectionAttempt without its fields")
                    who = parse_xor_address(peer, msg.transaction)
                    nursery.start_soon(self._bind, cid, who)
                continue  # other indications, or one we cannot understand: ignored
            waiting = self._pending.get(msg.transaction)
            if waiting is None:
                raise self._fail("answered a request it was not asked")
            try:
                waiting.send_nowait(data)
            except trio.WouldBlock:
                raise self._fail("answered one request twice") from None

    async def _bind(self, cid: bytes, peer: Endpoint) -> None:
        """A data connection for ConnectionAttempt `cid`, handed to `incoming` once bound.
        A bind that fails drops that one peer connection (the peer may dial again)."""
        if self._binding.borrowed_tokens >= MAX_BINDING:
            return
        async with self._binding:
            stream = await self._open_data(cid)
            if stream is None:
                return
            inner, first = stream
            try:
                self._in_send.send_nowait(TurnStream(inner, peer, self.server, first))
            except (trio.WouldBlock, trio.ClosedResourceError, trio.BrokenResourceError):
                await trio.aclose_forcefully(inner)

    async def _open_data(self, cid: bytes) -> tuple[trio.SocketStream, bytes] | None:
        ep = self.server.endpoint
        for attempt in (1, 2):
            inner: trio.SocketStream | None = None
            try:
                with trio.fail_after(self.timeout):
                    inner = await connect_tcp(ep)
                    transaction, data = self._signed(
                        CONNECTION_BIND, lambda tid: [(ATTR_CONNECTION_ID, cid)]
                    )
                    await inner.send_all(data)
                    reader = StunReader(inner, MAX_TURN_MESSAGE, str(self.server))
                    self._answer(CONNECTION_BIND, await reader.message(), transaction)
                return inner, reader.rest
            except Refused as exc:
                if inner is not None:
                    await trio.aclose_forcefully(inner)
                if exc.code == 438 and attempt == 1 and exc.nonce:
                    self._nonce = exc.nonce
                    continue
                return None
            except (TurnError, StunError, OSError, trio.BrokenResourceError, trio.TooSlowError):
                if inner is not None:
                    await trio.aclose_forcefully(inner)
                return None
        return None

    async def _keep(self, every: float) -> None:
        """Refresh the allocation and the permissions every `every` seconds, or at half the
        lifetime the server granted where that is sooner."""
        every = min(every, max(1.0, self.lifetime / 2))
        while True:
            await trio.sleep(every)
            try:
                await self.refresh(self.lifetime)
            except TurnError as exc:
                self.failure = self.failure or exc
                if self._stream is not None:
                    await trio.aclose_forcefully(self._stream)
                return


@asynccontextmanager
async def open_turn(
    server: TurnServer, *, lifetime: int = 600, refresh: float = 120.0, timeout: float = 5.0
) -> AsyncIterator[TurnRelay]:
    """A TCP allocation on `server`, refreshed every `refresh` seconds while the block runs
    and released at its end. `TurnError` (naming the server and the reason) if none is made.

    Inside the block the relay may still fail (the server restarts, say): then
    `relay.closed` is set, `relay.failure` says why, and `relay.incoming` ends.
    """
    relay = TurnRelay(server, timeout=timeout)
    try:
        await relay._allocate(lifetime)
    except BaseException:
        if relay._stream is not None:
            await trio.aclose_forcefully(relay._stream)
        raise
    assert relay._stream is not None
    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(relay._read_control)
            nursery.start_soon(relay._keep, refresh)
            try:
                yield relay
            finally:
                nursery.cancel_scope.cancel()
    finally:
        with trio.CancelScope(shield=True):
            with trio.move_on_after(min(timeout, 2.0)):
                await relay._release()
            relay._in_send.close()
            await trio.aclose_forcefully(relay._stream)
