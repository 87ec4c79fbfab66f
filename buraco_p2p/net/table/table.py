"""The table: who is seated, and the messages that seat them.

Sans-IO: this module validates and builds the join/welcome/roster messages and keeps the
host's seating state (`HostTable`); `mesh.py` does the talking. A table has the number of
seats its rules play (2 to 6; 4 unless told). The host is seat 0; the others get the lowest
free seat in the order the host approves them. A peer that was already seated and comes
back with the same identity (after a crash or a network change) gets its old seat back
without a new approval, with its new addresses and the nickname it was seated with: a
nickname is bound to its identity for the table.

A seat once given keeps its key until the roster records its departure (a kick by the
host, or the peer leaving): every peer checks each new roster against the one it holds
(`succession`), so a host cannot silently hand a seated player's seat to another key.

Every message arrives over an authenticated link, so the sender's identity and nickname
come from the handshake, never from the message body; the body is still hostile input
and every field is checked.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from buraco_p2p.net.channel.errors import NetError
from buraco_p2p.net.channel.identity import PeerKey, validate_nickname
from buraco_p2p.net.reach.candidates import CandidateKind
from buraco_p2p.net.reach.invite import MAX_ADDRESSES, Endpoint, InviteError

DEFAULT_SEATS = 4
MIN_SEATS = 2
MAX_SEATS = 6
MAX_REASON_LEN = 200
MIN_MESH_SECRET = 16
MAX_MESH_SECRET = 64
# Departures a roster remembers, newest last: enough for any peer that was away a while.
MAX_DEPARTURES = 32
KICKED = "kicked"
LEFT = "left"
LEAVE = "leave"  # the record a seated joiner sends the host to give up its seat


class TableError(NetError):
    """A table message or action that cannot be accepted; names the peer when known."""


class JoinRefused(TableError):
    """The host refused us (full table, declined by the host, ...)."""


class RosterError(TableError):
    """A malformed or inconsistent roster from the host."""


@dataclass(frozen=True)
class Member:
    """A seated peer. `kinds` says how each of `addresses` was learnt (2.11's wire codes),
    one per address; it is () when every address is an own-interface one (kind 0), the only
    form such a list takes, on the wire as here."""

    seat: int
    key: PeerKey
    nickname: str
    addresses: tuple[Endpoint, ...]
    kinds: tuple[CandidateKind, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "kinds", canonical_kinds(self.addresses, self.kinds))

    def kind_of(self, index: int) -> CandidateKind:
        """The kind of `addresses[index]`."""
        return self.kinds[index] if self.kinds else CandidateKind.HOST

    def relayed(self) -> tuple[Endpoint, ...]:
        """The member's relayed (TURN) addresses: at most one."""
        return tuple(ep for i, ep in enumerate(self.addresses)
                     if self.kind_of(i) == CandidateKind.RELAYED)  # fmt: skip

    def to_wire(self) -> dict[str, Any]:
        wire: dict[str, Any] = {
            "seat": self.seat,
            "key": self.key.raw,
            "nick": self.nickname,
            "addrs": addresses_to_wire(self.addresses),
        }
        wire_kinds = kinds_to_wire(self.kinds)
        if wire_kinds is not None:
            wire["kinds"] = wire_kinds
        return wire

    def label(self) -> str:
        return f"{self.nickname} ({self.key.fingerprint()})"


@dataclass(frozen=True)
class Departure:
    """A seat freed: `key` no longer holds `seat`, because it was kicked or it left."""

    seat: int
    key: PeerKey
    reason: str  # KICKED or LEFT

    def to_wire(self) -> dict[str, Any]:
        return {"seat": self.seat, "key": self.key.raw, "reason": self.reason}


@dataclass(frozen=True)
class Roster:
    """The seated peers, ordered by seat; `version` grows with every change.

    `seats` is the table's size; `departures` the most recent freed seats, newest last.
    """

    table_id: bytes
    version: int
    members: tuple[Member, ...]
    seats: int = DEFAULT_SEATS
    departures: tuple[Departure, ...] = ()

    @property
    def host(self) -> Member:
        return self.members[0]

    @property
    def full(self) -> bool:
        return len(self.members) >= self.seats

    def free_seat(self) -> int | None:
        """The lowest seat nobody holds, or None."""
        taken = {m.seat for m in self.members}
        return next((s for s in range(self.seats) if s not in taken), None)

    def member(self, key: PeerKey) -> Member | None:
        for m in self.members:
            if m.key == key:
                return m
        return None

    def seat_keys(self) -> tuple[PeerKey, ...]:
        return tuple(m.key for m in self.members)

    def to_wire(self) -> dict[str, Any]:
        return {
            "table": self.table_id,
            "version": self.version,
            "seats": self.seats,
            "members": [m.to_wire() for m in self.members],
            "left": [d.to_wire() for d in self.departures],
        }

    @classmethod
    def from_wire(cls, value: Any, sender: str) -> Roster:
        def bad(why: str) -> RosterError:
            return RosterError(f"roster from {sender} is invalid: {why}")

        fields = {"table", "version", "seats", "members", "left"}
        if not isinstance(value, dict) or set(value) != fields:
            raise bad("not a roster record")
        table_id, version, members = value["table"], value["version"], value["members"]
        seats, left = value["seats"], value["left"]
        if not isinstance(table_id, bytes) or len(table_id) != 16:
            raise bad("table id")
        if type(version) is not int or not 0 <= version < 2**63:
            raise bad("version")
        if type(seats) is not int or not MIN_SEATS <= seats <= MAX_SEATS:
            raise bad(f"seat count (must be {MIN_SEATS}..{MAX_SEATS})")
        if not isinstance(members, list) or not 1 <= len(members) <= seats:
            raise bad("member list")
        parsed: list[Member] = []
        for item in members:
            if not isinstance(item, dict) or set(item) - {"kinds"} != _MEMBER_FIELDS:
                raise bad("member record")
            seat = item["seat"]
            low = parsed[-1].seat + 1 if parsed else 0
            if type(seat) is not int or not low <= seat < seats or (not parsed and seat != 0):
                raise bad("seats must start at 0 (the host) and increase, below the seat count")
            try:
                key = PeerKey(item["key"])
                nickname = validate_nickname(item["nick"])
            except ValueError as exc:
                raise bad(str(exc)) from exc
            addresses = addresses_from_wire(item["addrs"], sender)
            kinds = kinds_from_wire(item.get("kinds"), addresses, sender)
            parsed.append(Member(seat, key, nickname, addresses, kinds))
        if len({m.key for m in parsed}) != len(parsed):
            raise bad("the same identity holds two seats")
        if not isinstance(left, list) or len(left) > MAX_DEPARTURES:
            raise bad(f"departure list (at most {MAX_DEPARTURES})")
        departures: list[Departure] = []
        for item in left:
            if not isinstance(item, dict) or set(item) != {"seat", "key", "reason"}:
                raise bad("departure record")
            seat, reason = item["seat"], item["reason"]
            if type(seat) is not int or not 1 <= seat < seats or reason not in (KICKED, LEFT):
                raise bad("departure record")
            try:
                key = PeerKey(item["key"])
            except ValueError as exc:
                raise bad(str(exc)) from exc
            departures.append(Departure(seat, key, reason))
        return cls(table_id, version, tuple(parsed), seats, tuple(departures))


_MEMBER_FIELDS = frozenset({"seat", "key", "nick", "addrs"})
MAX_RELAYED = 1  # a peer holds one TURN allocation (2.14)
# Where a relayed (TURN) candidate cannot be (2.6): a TURN server lends a public unicast
# address, or one of its provider's shared space (100.64.0.0/10, RFC 6598: a TURN server
# inside a carrier-grade NAT's network), so one inside a network, unspecified, multicast or
# reserved is a lie, or a way to have peers dial into someone's LAN. IPv6: only global
# unicast (2000::/3) is taken.
_NOT_RELAYED_V4 = tuple(
    ipaddress.ip_network(net)
    for net in ("0.0.0.0/8", "10.0.0.0/8", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12",
                "192.168.0.0/16", "224.0.0.0/4", "240.0.0.0/4")
)  # fmt: skip
_GLOBAL_V6 = ipaddress.ip_network("2000::/3")


def canonical_kinds(
    addresses: tuple[Endpoint, ...], kinds: tuple[int, ...]
) -> tuple[CandidateKind, ...]:
    """`kinds` as CandidateKinds, () when every one is kind 0 (or none is given): one form
    for one meaning. `ValueError` when a non-empty `kinds` does not match `addresses`."""
    if not kinds:
        return ()
    if len(kinds) != len(addresses):
        raise ValueError("one kind per address")
    out = tuple(CandidateKind(k) for k in kinds)
    return out if any(out) else ()


def relayed_refused(ep: Endpoint) -> bool:
    """Whether `ep` cannot be a relayed (TURN) address (2.6)."""
    ip = ep.ip
    if isinstance(ip, ipaddress.IPv4Address):
        return any(ip in net for net in _NOT_RELAYED_V4)
    return ip not in _GLOBAL_V6


def kinds_from_wire(
    value: Any, addresses: tuple[Endpoint, ...], sender: str
) -> tuple[CandidateKind, ...]:
    """The `kinds` beside an `addrs` list (2.6): absent (None here) means every address is
    of kind 0; present, one code 0..3 per address, not all 0 (that list is omitted), at most
    one relayed (3), and a relayed address is one a TURN server could lend: public, unicast."""
    if value is None:
        return ()
    if not isinstance(value, list) or len(value) != len(addresses):
        raise TableError(f"{sender} sent a kinds list that is not one kind per address")
    if any(type(k) is not int or not 0 <= k <= max(CandidateKind) for k in value):
        raise TableError(f"{sender} sent an unknown candidate kind (0..3)")
    if not any(value):
        raise TableError(f"{sender} sent a kinds list of only 0 (it is left out instead)")
    kinds = tuple(CandidateKind(k) for k in value)
    relayed = [ep for ep, k in zip(addresses, kinds, strict=True) if k == CandidateKind.RELAYED]
    if len(relayed) > MAX_RELAYED:
        raise TableError(f"{sender} sent more than {MAX_RELAYED} relayed address")
    for ep in relayed:
        if relayed_refused(ep):
            raise TableError(
                f"{sender} sent a relayed address no TURN server lends (inside one network, "
                f"not unicast, or reserved): {ep}"
            )
    return kinds


def kinds_for(
    addresses: tuple[Endpoint, ...], known: Mapping[Endpoint, CandidateKind]
) -> tuple[CandidateKind, ...]:
    """The canonical kinds of `addresses`, each as `known` says (kind 0 where it says none),
    for a greeting or our roster entry. A relayed address that a reader would refuse (a TURN
    server inside our own network, or on our machine) is written as kind 0: to anyone who can
    reach it, it is an address of that network like any other."""
    kinds: list[CandidateKind] = []
    for ep in addresses:
        kind = known.get(ep, CandidateKind.HOST)
        lawful = not relayed_refused(ep) and CandidateKind.RELAYED not in kinds
        if kind == CandidateKind.RELAYED and not lawful:
            kind = CandidateKind.HOST
        kinds.append(kind)
    return canonical_kinds(addresses, tuple(kinds))


def kinds_to_wire(kinds: tuple[CandidateKind, ...]) -> list[int] | None:
    """The wire `kinds` for a canonical tuple, or None when it is left out (all kind 0)."""
    return [int(k) for k in kinds] if kinds else None


def addresses_to_wire(addresses: tuple[Endpoint, ...]) -> list[list[Any]]:
    return [[str(ep.ip), ep.port] for ep in addresses]


def addresses_from_wire(value: Any, sender: str) -> tuple[Endpoint, ...]:
    if not isinstance(value, list) or len(value) > MAX_ADDRESSES:
        raise TableError(f"{sender} sent an address list that is not a list of <= {MAX_ADDRESSES}")
    out: list[Endpoint] = []
    for item in value:
        if (
            not isinstance(item, list)
            or len(item) != 2
            or not isinstance(item[0], str)
            or len(item[0]) > 64
            or type(item[1]) is not int
        ):
            raise TableError(f"{sender} sent a malformed address")
        try:
            ip = ipaddress.ip_address(item[0])
            if isinstance(ip, ipaddress.IPv6Address) and ip.scope_id is not None:
                # A zone id names an interface of the sender's machine, no address of ours.
                raise ValueError(f"{item[0]!r} carries a zone id")
            out.append(Endpoint(ip, item[1]))
        except (ValueError, InviteError) as exc:
            raise TableError(f"{sender} sent a bad address: {exc}") from exc
    return tuple(out)


# -- messages ------------------------------------------------------------------------------

HELLO_JOIN = "join"
HELLO_MESH = "mesh"


def join_message(
    addresses: tuple[Endpoint, ...], kinds: tuple[CandidateKind, ...] = ()
) -> list[Any]:
    """First message of a joiner on a fresh link to the host; `kinds` beside the addresses
    only when one of them is not an own-interface address. A relayed address goes last: the
    path of last resort, tried after the others."""
    kinds = canonical_kinds(addresses, kinds)
    if kinds:
        order = sorted(range(len(addresses)), key=lambda i: kinds[i] == CandidateKind.RELAYED)
        addresses = tuple(addresses[i] for i in order)
        kinds = tuple(kinds[i] for i in order)
    body: dict[str, Any] = {"addrs": addresses_to_wire(addresses)}
    wire_kinds = kinds_to_wire(kinds)
    if wire_kinds is not None:
        body["kinds"] = wire_kinds
    return [HELLO_JOIN, body]


def mesh_message() -> list[Any]:
    """First message on a peer-to-peer link between two seated peers."""
    return [HELLO_MESH]


@dataclass(frozen=True)
class Greeting:
    """The first message on an accepted link: `kind` HELLO_JOIN (with the joiner's
    addresses and their kinds, canonical as `Member.kinds`) or HELLO_MESH."""

    kind: str
    addresses: tuple[Endpoint, ...] = ()
    kinds: tuple[CandidateKind, ...] = ()


def parse_greeting(msg: Any, sender: str) -> Greeting:
    """The greeting `msg`, checked in full; `TableError` naming `sender` otherwise."""
    if isinstance(msg, list) and msg == [HELLO_MESH]:
        return Greeting(HELLO_MESH)
    if (
        isinstance(msg, list)
        and len(msg) == 2
        and msg[0] == HELLO_JOIN
        and isinstance(msg[1], dict)
        and set(msg[1]) - {"kinds"} == {"addrs"}
    ):
        addresses = addresses_from_wire(msg[1]["addrs"], sender)
        kinds = kinds_from_wire(msg[1].get("kinds"), addresses, sender)
        return Greeting(HELLO_JOIN, addresses, kinds)
    raise TableError(f"{sender} opened a link without a valid join or mesh greeting")


def parse_hello(msg: Any, sender: str) -> tuple[str, tuple[Endpoint, ...]]:
    """(kind, addresses) of the first message on an accepted link (`parse_greeting`)."""
    greeting = parse_greeting(msg, sender)
    return greeting.kind, greeting.addresses


def welcome_message(seat: int, roster: Roster, mesh_secret: bytes) -> list[Any]:
    """The host seats the joiner at `seat`. `mesh_secret` keys the links between seated
    peers: it outlives invite rotations, so joiners seated under different invites meet."""
    return ["welcome", seat, roster.to_wire(), mesh_secret]


def refused_message(reason: str) -> list[Any]:
    return ["refused", reason[:MAX_REASON_LEN]]


def roster_message(roster: Roster) -> list[Any]:
    return ["roster", roster.to_wire()]


def parse_welcome(msg: Any, host: str, me: PeerKey, table_id: bytes) -> tuple[Roster, bytes]:
    """The host's answer to a join: our roster and the table's mesh secret, or `JoinRefused`
    with the host's reason."""
    if isinstance(msg, list) and len(msg) == 2 and msg[0] == "refused":
        reason = msg[1]
        if not isinstance(reason, str) or len(reason) > MAX_REASON_LEN:
            # A malformed record is a protocol error (close, retry), never a final refusal.
            raise TableError(
                f"{host} sent a refused record whose reason is not a str of "
                f"at most {MAX_REASON_LEN} characters"
            )
        printable = "".join(ch if ch.isprintable() else "?" for ch in reason)
        raise JoinRefused(f"{host} refused to seat us: {printable}")
    if not (isinstance(msg, list) and len(msg) == 4 and msg[0] == "welcome"):
        raise TableError(f"{host} answered the join with something other than welcome/refused")
    secret = msg[3]
    if not isinstance(secret, bytes) or not MIN_MESH_SECRET <= len(secret) <= MAX_MESH_SECRET:
        raise TableError(f"{host} sent a welcome whose mesh secret is not 16..64 bytes")
    roster = Roster.from_wire(msg[2], host)
    check_roster(roster, host, table_id)
    seat = msg[1]
    mine = roster.member(me)
    if mine is None or type(seat) is not int or mine.seat != seat:
        raise RosterError(f"roster from {host} does not seat us where the welcome says")
    return roster, secret


def check_roster(roster: Roster, sender: str, table_id: bytes) -> None:
    if roster.table_id != table_id:
        raise RosterError(f"roster from {sender} is for another table")


@dataclass(frozen=True)
class Succession:
    """What a newer roster changes for the seats we knew, once it is found lawful."""

    freed: tuple[Departure, ...]  # seats we knew that were freed
    renamed: tuple[tuple[Member, Member], ...]  # (before, after) of a seated key


def succession(old: Roster, new: Roster, sender: str) -> Succession:
    """Check `new` against `old`: every seat we knew keeps its key unless `new` records
    that key's departure from that seat. `RosterError` (naming `sender`) otherwise.
    """
    if new.seats != old.seats:
        raise RosterError(f"roster from {sender} changes the table's seat count: refused")
    if new.host.key != old.host.key:
        raise RosterError(f"roster from {sender} names another host: refused")
    departed = {(d.key, d.seat): d for d in new.departures}
    freed: list[Departure] = []
    renamed: list[tuple[Member, Member]] = []
    for m in old.members:
        now = new.member(m.key)
        if now is not None and now.seat == m.seat:
            if now.nickname != m.nickname:
                renamed.append((m, now))
            continue
        record = departed.get((m.key, m.seat))
        if record is None:
            raise RosterError(
                f"roster from {sender} takes seat {m.seat} from {m.label()} with no kick or "
                "departure recorded: refused"
            )
        freed.append(record)
    return Succession(tuple(freed), tuple(renamed))


@dataclass(frozen=True)
class Admission:
    """What the host decided about one join request."""

    member: Member | None  # None: refused
    returning: bool
    reason: str = ""


class HostTable:
    """The host's seating state. Approval itself (a human prompt) happens outside."""

    def __init__(
        self,
        table_id: bytes,
        host: Member,
        restore: Roster | None = None,
        *,
        seats: int = DEFAULT_SEATS,
    ) -> None:
        """A new table of `seats`, or with `restore` the saved roster of a restarted host."""
        if host.seat != 0:
            raise ValueError("the host sits in seat 0")
        if not MIN_SEATS <= seats <= MAX_SEATS:
            raise ValueError(f"a table has {MIN_SEATS}..{MAX_SEATS} seats")
        if restore is None:
            self.roster = Roster(table_id, 0, (host,), seats)
            return
        if restore.table_id != table_id or restore.host.key != host.key:
            raise TableError("the saved roster belongs to another table or host")
        self.roster = replace(
            restore, version=restore.version + 1, members=(host, *restore.members[1:])
        )

    def _next(self, members: tuple[Member, ...], departed: Departure | None = None) -> Roster:
        """The roster that follows ours with `members` seated (and `departed` recorded)."""
        departures = self.roster.departures
        if departed is not None:
            departures = (*departures, departed)[-MAX_DEPARTURES:]
        members = tuple(sorted(members, key=lambda m: m.seat))
        return replace(
            self.roster, version=self.roster.version + 1, members=members, departures=departures
        )

    def _with(self, members: tuple[Member, ...], departed: Departure | None = None) -> None:
        self.roster = self._next(members, departed)

    def classify(self, key: PeerKey) -> str:
        """'member' (returning, no approval needed), 'full', or 'new' (ask the host)."""
        if self.roster.member(key) is not None:
            return "member"
        if self.roster.full:
            return "full"
        return "new"

    def seat_new(
        self,
        key: PeerKey,
        nickname: str,
        addresses: tuple[Endpoint, ...],
        kinds: tuple[CandidateKind, ...] = (),
    ) -> Admission:
        """Seat an approved newcomer, re-checking fullness (approval may have taken a while)."""
        existing = self.roster.member(key)
        if existing is not None:
            return self.readmit(key, nickname, addresses, kinds)
        seat = self.roster.free_seat()
        if seat is None:
            return Admission(None, False, "the table is full")
        member = Member(seat, key, nickname, addresses, kinds)
        self._with((*self.roster.members, member))
        return Admission(member, False)

    def vacate(self, key: PeerKey) -> bool:
        """Take back the seat just given to `key` (its welcome could not be delivered).

        Only the last seat can be taken back, so every other seat number stays as it is;
        the roster records it as a departure, in case a peer already saw the seat given.
        """
        members = self.roster.members
        if len(members) < 2 or members[-1].key != key:
            return False
        self._with(members[:-1], Departure(members[-1].seat, key, LEFT))
        return True

    def free(self, key: PeerKey, reason: str = KICKED) -> Departure | None:
        """Free `key`'s seat (a kick, or the peer leaving); None if it holds no seat here."""
        roster = self.freeing(key, reason)
        if roster is None:
            return None
        self.roster = roster
        return roster.departures[-1]

    def freeing(self, key: PeerKey, reason: str = KICKED) -> Roster | None:
        """The roster that frees `key`'s seat, without freeing it; None if `key` holds no
        seat here the host can free.

        A freed seat takes effect only once its roster is saved: the host saves this roster
        and only then makes it the table's (`commit`), so a save that fails changes nothing
        and the seat stays taken.
        """
        existing = self.roster.member(key)
        if existing is None or existing.seat == 0 or reason not in (KICKED, LEFT):
            return None
        departure = Departure(existing.seat, key, reason)
        return self._next(tuple(m for m in self.roster.members if m.key != key), departure)

    def commit(self, roster: Roster) -> None:
        """Make `roster`, built by `freeing` from the current roster and saved since, the
        table's. Anything else is refused (`ValueError`): the table changed meanwhile, and
        the roster would undo that change."""
        if roster.version != self.roster.version + 1 or roster.table_id != self.roster.table_id:
            raise ValueError("that roster does not follow the table's current one")
        self.roster = roster

    def readmit(
        self,
        key: PeerKey,
        nickname: str,
        addresses: tuple[Endpoint, ...],
        kinds: tuple[CandidateKind, ...] = (),
    ) -> Admission:
        """A seated identity back with new addresses (and their kinds); it keeps the nickname
        it was seated with (a nickname is bound to its identity for the table), whatever it
        says now."""
        existing = self.roster.member(key)
        if existing is None:
            return Admission(None, False, "not seated at this table")
        updated = replace(existing, addresses=addresses, kinds=kinds)
        if updated != existing:
            self._with(tuple(updated if m.key == key else m for m in self.roster.members))
        return Admission(updated, True)
