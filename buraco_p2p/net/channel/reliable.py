"""Reliable, exactly-once, in-order delivery between two peers across reconnects.

A `SecureLink` already gives ordered, authenticated delivery while it lives; what it
cannot give is continuity when the TCP connection (or the whole process) dies. This
module adds it, sans-IO in the style of h11: `ReliableChannel` holds the state for one
peer, turns outgoing payloads into `Data` records, and incoming records into payloads or
nothing (a duplicate), and never touches a socket or a clock.

* Per-sender sequence numbers start at 0 in each *incarnation* (a random id the sending
  process picks, or restores from a snapshot), so a peer that restarted without its state
  is recognised instead of having its fresh messages dropped as duplicates.
* Cumulative acks count what the application has *consumed*, not merely what arrived, so
  a snapshot persisted next to the application's own state resumes exactly: nothing the
  application saw is delivered again, nothing it missed is skipped.
* Unacked payloads stay in a bounded retransmit buffer; after a reconnect each side sends
  a `Resume` (what it has, what it still holds) and replays from the peer's `recv_next`.
  `recv_next` is never an acknowledgement: a message that arrived but was not consumed
  may still be asked for again, after the receiver restores its snapshot.

`Liveness` is the heartbeat/timeout bookkeeping, again with the clock handed in.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any

from buraco_p2p.net.channel.errors import NetError

INCARNATION_LEN = 16
DEFAULT_MAX_BUFFER = 8192
ACK_EVERY = 16
_MAX_SEQ = 2**63 - 1


class ReliableError(NetError):
    """A failure of reliable delivery with one peer; the message names the peer."""


class SendBufferFull(ReliableError):
    """Too many messages to one peer are unacknowledged (it is down or not consuming)."""


class SequenceError(ReliableError):
    """The peer broke the delivery protocol (gap, ack of unsent data, malformed record)."""


@dataclass(frozen=True)
class Data:
    seq: int
    ack: int
    payload: Any

    def to_wire(self) -> list[Any]:
        return ["d", self.seq, self.ack, self.payload]


@dataclass(frozen=True)
class Ack:
    """A cumulative ack; also serves as the heartbeat when there is nothing else to send."""

    ack: int

    def to_wire(self) -> list[Any]:
        return ["a", self.ack]


@dataclass(frozen=True)
class Resume:
    """First record on every (re)established link, in both directions."""

    incarnation: bytes  # the sender's stream id
    send_base: int  # lowest seq the sender can still (re)send
    peer_incarnation: bytes | None  # which of the receiver's streams recv_next refers to
    recv_next: int  # next seq the sender expects on that stream

    def to_wire(self) -> list[Any]:
        return ["r", self.incarnation, self.send_base, self.peer_incarnation, self.recv_next]


Record = Data | Ack | Resume
RELIABLE_TAGS = frozenset({"d", "a", "r"})


def _seq(value: Any, what: str, peer: str) -> int:
    if type(value) is not int or not 0 <= value <= _MAX_SEQ:
        raise SequenceError(f"{peer} sent an invalid {what}: {value!r:.40}")
    return value


def _incarnation(value: Any, what: str, peer: str) -> bytes:
    if not isinstance(value, bytes) or len(value) != INCARNATION_LEN:
        raise SequenceError(f"{peer} sent an invalid {what}")
    return value


def parse_record(msg: Any, peer: str) -> Record:
    """Validate one wire record from `peer`; anything malformed is a `SequenceError`."""
    if not isinstance(msg, list) or not msg:
        raise SequenceError(f"{peer} sent a malformed delivery record")
    tag = msg[0]
    if tag == "d" and len(msg) == 4:
        return Data(_seq(msg[1], "sequence number", peer), _seq(msg[2], "ack", peer), msg[3])
    if tag == "a" and len(msg) == 2:
        return Ack(_seq(msg[1], "ack", peer))
    if tag == "r" and len(msg) == 5:
        peer_inc = (
            None if msg[3] is None else _incarnation(msg[3], "resume incarnation", peer)
        )
        return Resume(
            _incarnation(msg[1], "incarnation", peer),
            _seq(msg[2], "send base", peer),
            peer_inc,
            _seq(msg[4], "resume point", peer),
        )
    raise SequenceError(f"{peer} sent an unknown delivery record {tag!r:.20}")


@dataclass(frozen=True)
class ChannelState:
    """What must survive a restart for exactly-once delivery with one peer."""

    incarnation: bytes
    send_next: int
    unacked: tuple[tuple[int, Any], ...]
    peer_incarnation: bytes | None
    recv_next: int

    def to_wire(self) -> list[Any]:
        return [
            self.incarnation,
            self.send_next,
            [[seq, payload] for seq, payload in self.unacked],
            self.peer_incarnation,
            self.recv_next,
        ]

    @classmethod
    def from_wire(cls, value: Any) -> ChannelState:
        where = "saved delivery state"
        if not isinstance(value, list) or len(value) != 5 or not isinstance(value[2], list):
            raise SequenceError(f"{where} is malformed")
        unacked: list[tuple[int, Any]] = []
        for item in value[2]:
            if not isinstance(item, list) or len(item) != 2:
                raise SequenceError(f"{where} has a malformed buffered message")
            unacked.append((_seq(item[0], "buffered seq", where), item[1]))
        state = cls(
            _incarnation(value[0], "incarnation", where),
            _seq(value[1], "send_next", where),
            tuple(unacked),
            None if value[3] is None else _incarnation(value[3], "peer incarnation", where),
            _seq(value[4], "recv_next", where),
        )
        expected = list(range(state.send_next - len(unacked), state.send_next))
        if [seq for seq, _ in unacked] != expected:
            raise SequenceError(f"{where} has a non-contiguous retransmit buffer")
        return state


@dataclass(frozen=True)
class StreamRestarted:
    """The peer came back as a new incarnation: `lost` messages of its old stream never came."""

    lost_unknown: bool


class ReliableChannel:
    """Exactly-once, ordered delivery state for one peer (both directions).

    `peer_name` is only used in error messages. The channel trusts nothing the peer says:
    acks beyond what was sent, gaps, and data before a `Resume` are `SequenceError`s.
    """

    def __init__(
        self,
        incarnation: bytes,
        peer_name: str,
        *,
        max_buffer: int = DEFAULT_MAX_BUFFER,
        state: ChannelState | None = None,
    ) -> None:
        if len(incarnation) != INCARNATION_LEN:
            raise ValueError(f"incarnation must be {INCARNATION_LEN} bytes")
        self.peer_name = peer_name
        self.max_buffer = max_buffer
        self.incarnation = incarnation
        self.send_next = 0
        self._unacked: deque[tuple[int, Any]] = deque()
        self.peer_incarnation: bytes | None = None
        self.recv_next = 0
        self.consumed_next = 0
        self.acked_sent = 0
        self.peer_resumed = False
        if state is not None:
            if state.incarnation != incarnation:
                raise ValueError("saved state belongs to another incarnation")
            self.send_next = state.send_next
            self._unacked.extend(state.unacked)
            self.peer_incarnation = state.peer_incarnation
            self.recv_next = self.consumed_next = self.acked_sent = state.recv_next

    # -- outgoing ---------------------------------------------------------------------

    @property
    def send_base(self) -> int:
        return self._unacked[0][0] if self._unacked else self.send_next

    @property
    def unacked_count(self) -> int:
        return len(self._unacked)

    def send(self, payload: Any) -> Data:
        """Assign the next sequence number and keep the payload until it is acked."""
        if len(self._unacked) >= self.max_buffer:
            raise SendBufferFull(
                f"{len(self._unacked)} messages to {self.peer_name} are unacknowledged; "
                "the peer is down or not reading"
            )
        seq = self.send_next
        self.send_next += 1
        self._unacked.append((seq, payload))
        return Data(seq, self._take_ack(), payload)

    def on_ack(self, ack: int) -> None:
        if ack > self.send_next:
            raise SequenceError(
                f"{self.peer_name} acknowledged message {ack} but only {self.send_next} were sent"
            )
        while self._unacked and self._unacked[0][0] < ack:
            self._unacked.popleft()

    # -- incoming ---------------------------------------------------------------------

    def on_data(self, record: Data) -> tuple[bool, Any]:
        """(True, payload) for a new message, (False, None) for a duplicate."""
        if not self.peer_resumed:
            raise SequenceError(f"{self.peer_name} sent data before resuming the stream")
        self.on_ack(record.ack)
        if record.seq < self.recv_next:
            return False, None
        if record.seq > self.recv_next:
            raise SequenceError(
                f"{self.peer_name} skipped messages {self.recv_next}..{record.seq - 1}"
            )
        if self.recv_next - self.consumed_next >= self.max_buffer:
            raise SequenceError(
                f"{self.peer_name} sent more than {self.max_buffer} messages we have not read yet"
            )
        self.recv_next += 1
        return True, record.payload

    def consumed(self, incarnation: bytes | None) -> None:
        """The application took one message of `incarnation`'s stream off the queue."""
        if incarnation == self.peer_incarnation and self.consumed_next < self.recv_next:
            self.consumed_next += 1

    def ack_due(self) -> bool:
        return self.consumed_next - self.acked_sent >= ACK_EVERY

    def make_ack(self) -> Ack:
        return Ack(self._take_ack())

    def _take_ack(self) -> int:
        self.acked_sent = self.consumed_next
        return self.consumed_next

    # -- (re)connection ---------------------------------------------------------------

    def link_lost(self) -> None:
        """The link died; the next one starts with a fresh `Resume` exchange."""
        self.peer_resumed = False

    def make_resume(self) -> Resume:
        return Resume(self.incarnation, self.send_base, self.peer_incarnation, self.recv_next)

    def on_resume(self, resume: Resume) -> tuple[list[Data], StreamRestarted | None]:
        """Adopt the peer's view; return the records to retransmit (in order)."""
        restarted: StreamRestarted | None = None
        if resume.incarnation != self.peer_incarnation:
            if self.peer_incarnation is not None:
                restarted = StreamRestarted(lost_unknown=True)
            self.peer_incarnation = resume.incarnation
            self.recv_next = self.consumed_next = self.acked_sent = resume.send_base
        elif resume.send_base > self.recv_next:
            raise SequenceError(
                f"{self.peer_name} no longer holds messages {self.recv_next}.."
                f"{resume.send_base - 1} that were never delivered"
            )
        self.peer_resumed = True
        if resume.peer_incarnation == self.incarnation:
            # `recv_next` counts what reached the peer, not what its application consumed:
            # it says where to resend from and acknowledges nothing. A peer that crashes and
            # restores a snapshot asks again from its consumed count, which we still hold.
            start = resume.recv_next
            if start > self.send_next:
                raise SequenceError(
                    f"{self.peer_name} resumes from message {start} but only "
                    f"{self.send_next} were sent"
                )
            if start < self.send_base:
                raise SequenceError(
                    f"{self.peer_name} asks again for messages {start}..{self.send_base - 1}, "
                    "which it had consumed and acknowledged (a stale snapshot?)"
                )
        else:
            start = self.send_base
        ack = self._take_ack()
        resend = [Data(seq, ack, payload) for seq, payload in self._unacked if seq >= start]
        return resend, restarted

    def snapshot(self) -> ChannelState:
        """State to persist together with everything the application has consumed."""
        return ChannelState(
            self.incarnation,
            self.send_next,
            tuple(self._unacked),
            self.peer_incarnation,
            self.consumed_next,
        )


class Liveness:
    """Heartbeat and timeout bookkeeping for one link; times are seconds from any clock."""

    def __init__(self, now: float, *, interval: float = 1.0, timeout: float = 5.0) -> None:
        if not 0 < interval < timeout:
            raise ValueError("need 0 < heartbeat interval < timeout")
        self.interval = interval
        self.timeout = timeout
        self.last_received = now
        self.last_sent = now

    def on_receive(self, now: float) -> None:
        self.last_received = max(self.last_received, now)

    def on_send(self, now: float) -> None:
        self.last_sent = max(self.last_sent, now)

    def heartbeat_due(self, now: float) -> bool:
        return now - self.last_sent >= self.interval

    def timed_out(self, now: float) -> bool:
        return now - self.last_received >= self.timeout

    def next_wakeup(self) -> float:
        """The earliest time at which either a heartbeat or the timeout is due."""
        return min(self.last_sent + self.interval, self.last_received + self.timeout)

