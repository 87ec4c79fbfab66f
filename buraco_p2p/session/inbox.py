"""What a peer has heard from the table and holds until the entries' turn comes.

Entries of a round arrive in any order and are relayed more than once, so a peer screens
each one as it arrives (its form, its table, its author's signature, how far ahead it is)
and files it by index and author; it applies it only when its index comes. Kept apart from
the `Peer` because this is the part that faces untrusted bytes before any state changes, and
because its state is its own: the hashes heard, the entries held, and which of them bear an
heir's signature (a new identity a held "replace" void names, not yet seated: such an entry
is checked again, against the seated keys, when it is applied). Void entries are not filed
here: the peer's `Voter` holds them apart.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from buraco_p2p.session import bodies
from buraco_p2p.session.entry import Entry, decode_entry
from buraco_p2p.session.errors import BrokenChain, LogError, WrongTable
from buraco_p2p.session.voter import Voter

if TYPE_CHECKING:
    from buraco_p2p.session.table import Table

__all__ = ["MAX_AHEAD", "Inbox"]

# How far past the end of its log a peer files entries: no step is longer than a round of
# every party, so honest entries are never further ahead than a few steps; a hostile author
# cannot make a peer hold more than this many of its entries.
MAX_AHEAD = 64


class Inbox:
    """The entries heard (by hash) and held (index -> author -> entry, every kind but void)."""

    def __init__(self, table: Table, voter: Voter) -> None:
        self.table = table
        self.voter = voter
        self.seen: set[bytes] = {table.log[0].hash}
        self.unverified: set[bytes] = set()  # signed by a proposed heir, not yet a party
        self.held: dict[int, dict[int, Entry]] = {}

    def screen(self, data: bytes) -> Entry | None:
        """The entry `data` carries if it is news: well formed, of this table and version,
        signed by its author (or by the heir a held "replace" void names for it), and not
        too far ahead of the log; None for one heard before. Raises the `LogError` it is
        refused with."""
        entry = decode_entry(data)
        if entry.hash in self.seen:
            return None
        table = self.table
        if entry.table != table.terms.table_id or entry.version != table.log[0].version:
            raise WrongTable("entry of another table or version", index=entry.index,
                             author=entry.author, evidence=(entry.wire,))  # fmt: skip
        try:
            entry.verify(tuple(table.keys))
        except LogError:
            if not self.voter.heir_signed(entry):
                raise
            self.unverified.add(entry.hash)  # checked again when it is applied
        if entry.index >= len(table.log) + MAX_AHEAD:
            raise BrokenChain(
                f"index {entry.index} is too far ahead of the log ({len(table.log)})",
                index=entry.index, author=entry.author, evidence=(entry.wire,),
            )  # fmt: skip
        self.seen.add(entry.hash)
        return entry

    def file(self, entry: Entry) -> Entry | None:
        """Hold `entry` (not a void) until its index comes; returns the different entry its
        author already sent for that index, if any (equivocation), and then holds nothing."""
        slot = self.held.setdefault(entry.index, {})
        other = slot.get(entry.author)
        if other is not None:
            return other
        slot[entry.author] = entry
        return None

    def keep_own(self, entry: Entry) -> None:
        """Hold our own entry, made before its index came (it takes our place there)."""
        self.held.setdefault(entry.index, {})[entry.author] = entry

    def holds(self, index: int, party: int) -> bool:
        """Whether we hold an entry of `party` for `index`."""
        return party in self.held.get(index, {})

    def due(self, index: int, author: int | None) -> Entry | None:
        """The entry held for `index`: the expected author's, else any (an entry out of turn,
        which the table refuses), else None."""
        slot = self.held.get(index)
        if not slot:
            return None
        if author is not None and author in slot:
            return slot[author]
        return next(iter(slot.values()))

    def take(self, entry: Entry) -> bool:
        """The peer is about to apply `entry`: it is held no more. Returns whether it still
        needs its signature checked (an heir's, heard before the heir was seated)."""
        if entry.kind != bodies.VOID:
            slot = self.held.get(entry.index)
            if slot is not None:
                slot.pop(entry.author, None)
                if not slot:
                    del self.held[entry.index]
        if entry.hash in self.unverified:
            self.unverified.discard(entry.hash)
            return True
        return False
