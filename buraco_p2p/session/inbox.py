"""What a peer has heard from the table and holds until the entries' turn comes.

Entries of a round arrive in any order and are relayed more than once, so a peer screens
each one as it arrives (its form, its table, its author's signature under the key in force
at its index, how far ahead it is) and files it by index, author and `p`; it applies it only
when its index comes. Kept apart from the `Peer` because this is the part that faces
untrusted bytes before any state changes, and because its state is its own: the hashes
heard, the entries held, the key each held entry's signature was checked under (an heir's
entry, signed by a new identity a held "replace" void names but not yet seated, was checked
under none: it is checked again, against the key in force, when it is applied), and the
signed entries the table refused, which are still evidence of what their author signed.
Void entries are not held here: the peer's `Voter` holds them apart.

Bounded: what is held is what can still apply. Entries at indices the log has passed are
dropped (`prune`), at most `MAX_VARIANTS` entries of one author are held for one index (an
honest author signs a second only when the first was built on an entry that did not stand:
a speculative shuffle, 4.4; a would-be heir's signature fills one more place, apart, so
that no proposal can crowd out the author's own entries), and nothing further than
`MAX_AHEAD` past the log is taken.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from buraco_p2p.net.channel.identity import PeerKey
from buraco_p2p.session import bodies
from buraco_p2p.session.entry import Entry, decode_entry
from buraco_p2p.session.errors import BrokenChain, LogError, OutOfTurn, WrongTable
from buraco_p2p.session.voter import Voter

if TYPE_CHECKING:
    from buraco_p2p.session.table import Table

__all__ = ["MAX_AHEAD", "MAX_VARIANTS", "Inbox"]

# How far past the end of its log a peer files entries: no step is longer than a round of
# every party, so honest entries are never further ahead than a few steps; a hostile author
# cannot make a peer hold more than this many of its entries.
MAX_AHEAD = 64
# Entries of one author held for one index, checked under its key in force.
MAX_VARIANTS = 2


class Inbox:
    """The entries heard (by hash) and held (index -> author -> entries, every kind but
    void), the key each was checked under, and the refused ones kept as evidence."""

    def __init__(self, table: Table, voter: Voter) -> None:
        self.table = table
        self.voter = voter
        self.seen: set[bytes] = {table.log[0].hash}
        # hash -> (index, the key the signature was checked under, or None for an heir's)
        self.checked: dict[bytes, tuple[int, PeerKey | None]] = {}
        self.held: dict[int, dict[int, list[Entry]]] = {}
        self.refused: dict[tuple[int, int], Entry] = {}

    def screen(self, data: bytes) -> Entry | None:
        """The entry `data` carries if it is news: well formed, of this table and version,
        signed by its author under the key in force at its index (or, but for a void, by
        the heir a held "replace" void names for it), and not too far ahead of the log; None
        for one heard before. Raises the `LogError` it is refused with."""
        entry = decode_entry(data)
        if entry.hash in self.seen:
            return None
        table = self.table
        if entry.table != table.terms.table_id or entry.version != table.log[0].version:
            raise WrongTable("entry of another table or version", index=entry.index,
                             author=entry.author, evidence=(entry.wire,))  # fmt: skip
        key: PeerKey | None = None
        try:
            keys = table.keys_at(entry.index)
            entry.verify(keys)
            key = keys[entry.author]
        except LogError:
            if entry.kind == bodies.VOID or not self.voter.heir_signed(entry):
                raise
        if entry.index >= len(table.log) + MAX_AHEAD:
            raise BrokenChain(
                f"index {entry.index} is too far ahead of the log ({len(table.log)})",
                index=entry.index, author=entry.author, evidence=(entry.wire,),
            )  # fmt: skip
        self.seen.add(entry.hash)
        self.checked[entry.hash] = (entry.index, key)
        return entry

    def heir_only(self, entry: Entry) -> bool:
        """Whether `entry` was taken on an heir's signature alone (no key in force checked
        it): such an entry is no evidence of anything until the table checks it."""
        got = self.checked.get(entry.hash)
        return got is not None and got[1] is None

    def rivals(self, entry: Entry) -> list[Entry]:
        """Other entries its author signed for `entry`'s index with the same `p` that we
        hold or refused (if both signatures hold under the key in force, equivocation)."""
        mine = self.held.get(entry.index, {}).get(entry.author, [])
        kept = self.refused.get((entry.index, entry.author))
        return [e for e in (*mine, *([kept] if kept else []))
                if e.prev == entry.prev and e.wire != entry.wire]  # fmt: skip

    def file(self, entry: Entry) -> None:
        """Hold `entry` (not a void) until its index comes. Raises `OutOfTurn` if its author
        has filled its place there (`MAX_VARIANTS` entries checked under its key, or one
        taken on an heir's signature alone, which therefore never crowds out the author's
        own); the entry is then forgotten, and taken if it comes again."""
        slot = self.held.setdefault(entry.index, {}).setdefault(entry.author, [])
        heir = self.heir_only(entry)
        if sum(1 for e in slot if self.heir_only(e) == heir) >= (1 if heir else MAX_VARIANTS):
            self._tidy(entry.index, entry.author)
            self.seen.discard(entry.hash)
            self.checked.pop(entry.hash, None)
            raise OutOfTurn(
                "this author's place at this index is full", index=entry.index,
                author=entry.author, evidence=(entry.wire,),
            )  # fmt: skip
        slot.append(entry)

    def keep_own(self, entry: Entry) -> None:
        """Hold our own entry, made before its index came (it takes our place there)."""
        self.held.setdefault(entry.index, {}).setdefault(entry.author, []).append(entry)

    def withdraw(self, index: int, author: int) -> None:
        """Drop every entry held for `index` by `author` (our own speculative entry, built
        on an entry that did not stand)."""
        self.held.get(index, {}).pop(author, None)
        self._tidy(index, author)

    def keep_refused(self, entry: Entry, key: PeerKey | None) -> None:
        """The table refused `entry` (at the end of the log), whose signature holds under
        `key`: if that is the key in force and the entry continues the log, it stays evidence
        of what its author signed for its index (the first such entry per author and index),
        and it still meets any other they sign there."""
        table = self.table
        if entry.kind == bodies.VOID or entry.index != len(table.log):
            return
        # Only an entry that continues this log can meet a rival that does (4.6): one with
        # another `p` is no evidence, and may not take the place of one that is.
        if entry.prev != table.step_prev or not 0 <= entry.author < table.n:
            return
        if key is not None and key == table.key_at(entry.author, entry.index):
            self.refused.setdefault((entry.index, entry.author), entry)

    def key_of(self, entry: Entry) -> PeerKey | None:
        """The key `entry`'s signature was checked under on receipt (None: none yet)."""
        got = self.checked.get(entry.hash)
        return got[1] if got is not None else None

    def holds(self, index: int, party: int) -> bool:
        """Whether we hold an entry of `party` for `index`."""
        return bool(self.held.get(index, {}).get(party))

    def due(self, index: int, author: int | None) -> Entry | None:
        """The entry held for `index`: of the expected author's, one that continues the log
        (its `p` the step head the table names) checked under the key in force, else one
        that continues it, else any; else another author's (out of turn, which the table
        refuses); else None."""
        slot = self.held.get(index)
        if not slot:
            return None
        table = self.table
        if author is not None and slot.get(author):
            mine = slot[author]
            chained = [e for e in mine if e.prev == table.step_prev]
            for e in chained:
                if self.key_of(e) == table.keys[author]:
                    return e
            return (chained or mine)[0]
        for entries in slot.values():
            if entries:
                return entries[0]
        return None

    def take(self, entry: Entry) -> PeerKey | None:
        """The peer is about to apply `entry`: it is held no more. Returns the key its
        signature was checked under on receipt (None: it must be checked now)."""
        if entry.kind != bodies.VOID:
            slot = self.held.get(entry.index, {}).get(entry.author, [])
            if entry in slot:
                slot.remove(entry)
            self._tidy(entry.index, entry.author)
        got = self.checked.pop(entry.hash, None)
        return got[1] if got is not None else None

    def prune(self, length: int) -> None:
        """Forget what can no longer apply: entries held, and refused ones kept, at indices
        below the log's `length`, and the keys noted for them."""
        for index in [i for i in self.held if i < length]:
            del self.held[index]
        for at in [k for k in self.refused if k[0] < length]:
            del self.refused[at]
        for h in [h for h, (i, _) in self.checked.items() if i < length]:
            del self.checked[h]

    def drop_from(self, index: int) -> None:
        """Forget every entry held or kept at `index` and after (a roll-back to there)."""
        for i in [i for i in self.held if i >= index]:
            del self.held[i]
        for at in [k for k in self.refused if k[0] >= index]:
            del self.refused[at]

    def _tidy(self, index: int, author: int) -> None:
        slot = self.held.get(index)
        if slot is not None:
            if not slot.get(author, True):
                del slot[author]
            if not slot:
                del self.held[index]
