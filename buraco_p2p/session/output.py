"""What a call on a `Peer` hands its host: entries to send, to persist, to relay, and events.

Kept apart from the peer because it is the host's side of the bargain: every host (the
network node, the in-memory router, a benchmark) reads it, and its one rule binds the host,
not the peer: persist before you send or act.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from buraco_p2p.session.entry import Entry
from buraco_p2p.session.events import Event

__all__ = ["Output"]


@dataclass
class Output:
    """What one call produced: entries to send to every other party (wire bytes), entries
    appended to the log in order, events for the host, and entries first heard from others
    (relay them where the transport does not broadcast). A host writes `persist` to disk
    before it sends `send` or acts on `events`, so a restarted client resumes from its log;
    `rollback`, when set, comes first: the saved log is cut to that length."""

    send: list[bytes] = field(default_factory=list)
    persist: list[Entry] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    relay: list[bytes] = field(default_factory=list)
    # The log was cut back to this many entries (an equivocation found behind its end,
    # docs/protocol.md 4.6): the host drops its saved entries from this index on before it
    # saves `persist`.
    rollback: int | None = None
    # Every void entry this peer signed and stands by, when that list changed: the host saves
    # it (replacing what it saved before) before it sends anything, so a restart signs no
    # other void where these stand, and a roll-back's moot voids are not taken up again.
    votes: list[bytes] | None = None

    def extend(self, other: Output) -> None:
        if other.rollback is not None:
            self.rollback = min(other.rollback, self.rollback or other.rollback)
            self.persist = [e for e in self.persist if e.index < other.rollback]
        if other.votes is not None:
            self.votes = other.votes
        self.send += other.send
        self.persist += other.persist
        self.events += other.events
        self.relay += other.relay
