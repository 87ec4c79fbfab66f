"""Table admission: the greeting on every accepted link, and seating joiners at the host.

Every link a peer accepts starts with a greeting. A `mesh` greeting comes from a seated
peer and is handed to the mesh; a `join` greeting is a request for a seat and only the host
takes it: a returning identity gets its seat back at once, a new one waits for the host's
`approve` callback (one question at a time), and the new roster goes to everyone.

A host restarts from the roster it saved (`Mesh.roster_saver`), so every welcome carries a
roster already saved: a joiner never holds a roster the restarted host does not know, and a
seat whose roster cannot be saved is not given.

Anyone holding the invite can ask, as often as they like and under as many identities as they
like, so everything a request holds is bounded: at most `max_requests` wait at once (the next
is refused at once), each is answered within `request_timeout` seconds of its arrival or
refused as expired, and until it is seated the joiner's link reads under the pre-seat limits
(`link.PreseatLimits`). Each request carries a number that the host's prompt shows, so an
answer can be tied to the question it was given for.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import trio

from buraco_p2p.net.channel.errors import LinkError, MeshError, NetError
from buraco_p2p.net.channel.identity import PeerKey, confusable_nicknames
from buraco_p2p.net.channel.link import SecureLink
from buraco_p2p.net.reach.candidates import CandidateKind
from buraco_p2p.net.reach.invite import Endpoint
from buraco_p2p.net.table.table import (
    HELLO_JOIN,
    Admission,
    Greeting,
    HostTable,
    Member,
    TableError,
    parse_greeting,
    refused_message,
    roster_message,
    welcome_message,
)

if TYPE_CHECKING:
    from buraco_p2p.net.mesh.core import MeshCore

__all__ = [
    "JOIN_REQUEST_TIMEOUT",
    "MAX_JOIN_REQUESTS",
    "Approver",
    "Door",
    "JoinRequest",
    "auto_approve",
]

# Requests waiting for an answer at once (the one being asked included), and how long one may
# wait in all before it is refused as expired: long enough for a person to notice the prompt.
MAX_JOIN_REQUESTS = 8
JOIN_REQUEST_TIMEOUT = 120.0


@dataclass(frozen=True)
class JoinRequest:
    """A request for a seat. `number` (1, 2, ... per host) names it on the host's screen;
    `deadline` (on trio's clock) is when it expires unanswered, for a countdown beside it."""

    key: PeerKey
    nickname: str
    addresses: tuple[Endpoint, ...]
    number: int = 0
    deadline: float = float("inf")
    kinds: tuple[CandidateKind, ...] = ()  # of `addresses`, as `Member.kinds`


Approver = Callable[[JoinRequest], Awaitable[bool]]


async def auto_approve(request: JoinRequest) -> bool:
    """Seat everyone who knows the room secret (scripts, bots, tests)."""
    await trio.lowlevel.checkpoint()
    return True


class Door:
    """Every accepted link passes here first; on the host, `table` seats the joiners."""

    def __init__(self, mesh: MeshCore) -> None:
        self.mesh = mesh
        self.table: HostTable | None = None  # the host's seating state; None on a joiner
        self.approve: Approver = auto_approve
        self.max_requests = MAX_JOIN_REQUESTS
        self.request_timeout = JOIN_REQUEST_TIMEOUT
        self.waiting = 0  # requests waiting for an answer, the one being asked included
        self.expired = 0
        self.refused_busy = 0
        self._approval_lock = trio.Lock()
        self._numbers = itertools.count(1)

    def _lookalike(self, key: PeerKey, nickname: str) -> Member | None:
        """A seated member (not `key`) whose nickname could be taken for `nickname`."""
        roster = self.mesh.roster
        if roster is None:
            return None
        for member in roster.members:
            if member.key != key and confusable_nicknames(member.nickname, nickname):
                return member
        return None

    def _saved_welcome(self, seat: int) -> list[Any]:
        """The welcome for `seat`, built only once the roster it carries is saved.

        A host restarts from the roster on its disk (`Mesh.roster_saver`): a joiner that held
        a newer one would hold a seat, or addresses, the restarted host never gave. So the
        table's roster is adopted (and with it saved) first, and a save that fails sends no
        welcome at all.
        """
        table = self.table
        assert table is not None
        try:
            self.mesh.adopt_roster(table.roster)
        except OSError as exc:
            raise TableError(f"the roster could not be saved ({exc}); no welcome sent") from exc
        return welcome_message(seat, table.roster, self.mesh.mesh_secret)

    def is_member(self, key: PeerKey) -> bool:
        """Whether `key` holds a seat: its links skip the stranger's limits and caps."""
        roster = self.mesh.roster
        return roster is not None and roster.member(key) is not None

    async def handle_link(self, link: SecureLink) -> None:
        """Every accepted link: a join (host only) or a mesh link from a seated peer."""
        mesh = self.mesh
        try:
            with trio.fail_after(mesh.config.hello_timeout):
                hello = await link.receive()
            greeting = parse_greeting(hello, link.label)
        except (NetError, trio.TooSlowError) as exc:
            mesh.reject(link.label, exc)
            return
        if greeting.kind == HELLO_JOIN:
            if not mesh.is_host:
                mesh.reject(link.label, TableError("tried to join at a peer that is not the host"))
                return
            try:
                await self._admit(link, greeting)
            except NetError as exc:  # only this joiner's link is affected
                mesh.reject(link.label, exc)
            return
        if self.is_member(link.peer):
            link.seat()  # seated since its handshake completed
        await mesh.accept_peer_link(link)

    async def _admit(self, link: SecureLink, greeting: Greeting) -> None:
        mesh = self.mesh
        table = self.table
        assert table is not None
        key, nickname = link.peer, link.peer_nickname
        addresses, kinds = greeting.addresses, greeting.kinds
        verdict = table.classify(key)
        if verdict == "member":
            admission = table.readmit(key, nickname, addresses, kinds)
            if admission.member is None:
                await link.send(refused_message(admission.reason))
                return
            await link.send(self._saved_welcome(admission.member.seat))
        elif link.retired_secret:
            why = "this invite was replaced by a newer one: ask the host for the new invite"
            await link.send(refused_message(why))
            mesh.reject(link.label, TableError("asked for a seat with a replaced invite"))
            return
        elif verdict == "full":
            await link.send(refused_message("the table is full"))
            mesh.reject(link.label, TableError("tried to join a full table"))
            return
        else:
            lookalike = self._lookalike(key, nickname)
            if lookalike is not None:
                why = (
                    f"the nickname {nickname!r} looks like {lookalike.nickname!r}, already "
                    "seated: choose another (--nick)"
                )
                await link.send(refused_message(why))
                mesh.reject(link.label, TableError(f"refused: {why}"))
                return
            if self.waiting >= self.max_requests:
                self.refused_busy += 1
                await link.send(refused_message("too many join requests are waiting; try later"))
                mesh.reject(
                    link.label, TableError("asked to join while the request queue was full")
                )
                return
            self.waiting += 1
            try:
                request = JoinRequest(key, nickname, addresses, kinds=kinds)
                ok, answered = await self._ask(link, request)
            finally:
                self.waiting -= 1
            if answered is None:
                return  # withdrawn or expired: the link is already answered or gone
            admission = answered
            if not ok:
                await link.send(refused_message("the host declined"))
                mesh.reject(link.label, TableError("was declined by the host"))
                return
            if admission.member is None:
                await link.send(refused_message(admission.reason))
                return
            if admission.returning:
                await link.send(self._saved_welcome(admission.member.seat))
        # Every path above saved the roster before its welcome left (`_saved_welcome`).
        link.seat()
        await self.announce_roster(except_key=key)
        await mesh.run_link(key, link, relayed=False)

    async def _ask(self, link: SecureLink, request: JoinRequest) -> tuple[bool, Admission | None]:
        """Queue `request`, ask the host, and seat the joiner if it is still there.

        Returns the answer and the admission; None instead of an admission when the request
        ended without one (the joiner left, or the request expired and was refused).
        """
        mesh = self.mesh
        table = self.table
        assert table is not None
        key = request.key
        deadline = trio.current_time() + self.request_timeout
        with trio.move_on_at(deadline) as queued:
            await self._approval_lock.acquire()
        if queued.cancelled_caught:
            await self._expire(link)
            return False, None
        try:
            if table.classify(key) == "full":
                ok, left, expired = False, None, False
            else:
                numbered = JoinRequest(
                    request.key, request.nickname, request.addresses, next(self._numbers),
                    deadline, request.kinds,
                )
                ok, left, expired = await self._approve_while_connected(link, numbered, deadline)
            if left is not None:
                # Whatever the host answered, nobody is there to take the seat.
                mesh.reject(
                    link.label,
                    TableError(f"left before the host answered ({left}); seat not given"),
                )
                with trio.CancelScope(shield=True):
                    await link.aclose()
                return False, None
            if expired:
                await self._expire(link)
                return False, None
            admission = Admission(None, False)
            if ok:
                admission = table.seat_new(
                    key, request.nickname, request.addresses, request.kinds
                )
            if admission.member is not None and not admission.returning:
                # The seat stands only if it is saved and the welcome reaches a live link.
                try:
                    with trio.fail_after(mesh.config.hello_timeout):
                        await link.send(self._saved_welcome(admission.member.seat))
                except (NetError, trio.TooSlowError) as exc:
                    if table.vacate(key):
                        # A save that fails again leaves the disk a roster behind, which
                        # the next save brings up to date; the joiner is told nothing more.
                        with contextlib.suppress(OSError):
                            mesh.adopt_roster(table.roster)
                        await self.announce_roster(except_key=key)
                    raise TableError(
                        f"{link.label} could not be welcomed ({exc}); seat not given"
                    ) from None
            return ok, admission
        finally:
            self._approval_lock.release()

    async def _expire(self, link: SecureLink) -> None:
        self.expired += 1
        why = f"the host did not answer within {self.request_timeout:g} s"
        self.mesh.reject(link.label, TableError(f"join request expired: {why}"))
        with contextlib.suppress(LinkError):
            await link.send(refused_message(why))

    async def _approve_while_connected(
        self, link: SecureLink, request: JoinRequest, deadline: float
    ) -> tuple[bool, str | None, bool]:
        """The host's answer, why the joiner is gone if it left (or spoke) meanwhile, and
        whether the request expired first.

        A joiner says nothing until it is answered, so anything on its link during the
        question (end of stream, an error, a message) means it will not take the seat; the
        question is then withdrawn (the approver is cancelled), as it is at `deadline`.
        """
        answer = False
        left: str | None = None

        async def watch(scope: trio.CancelScope) -> None:
            nonlocal left
            try:
                await link.receive()
                left = "it spoke before it was answered"
            except LinkError as exc:
                left = str(exc) or type(exc).__name__
            scope.cancel()

        async def ask(scope: trio.CancelScope) -> None:
            nonlocal answer
            answer = await self.approve(request)
            scope.cancel()

        with trio.move_on_at(deadline) as expiry:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(watch, nursery.cancel_scope)
                nursery.start_soon(ask, nursery.cancel_scope)
        expired = expiry.cancelled_caught and left is None
        return (answer and not expired), left, expired

    async def announce_roster(self, except_key: PeerKey) -> None:
        """Host: send the current roster to every seated peer whose link is up."""
        mesh = self.mesh
        assert mesh.roster is not None
        message = roster_message(mesh.roster)
        for peer in mesh.peers():
            if peer != except_key and mesh.is_up(peer):
                with contextlib.suppress(MeshError, LinkError):
                    await mesh.send_control(peer, message)
