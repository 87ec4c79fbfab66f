"""What the table protocol refuses, as typed errors that name the author and carry evidence.

Every refusal of a log entry is a `LogError`: `index` is the log position the entry claimed,
`author` the party (position in the genesis) whose signature it carries, or None when the bytes
are not even a signed entry, and `evidence` the signed entries (wire bytes) that prove it to a
third party holding the log: one entry for a bad move, a bad proof or a wrong score (replay the
log up to it and it fails the same way), two for equivocation (two valid signatures by one
author for one slot of the log).
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = [
    "BadSignature",
    "BrokenChain",
    "Equivocation",
    "LogError",
    "MalformedEntry",
    "OutOfTurn",
    "RejectedEntry",
    "SessionError",
    "WrongTable",
]


class SessionError(Exception):
    """Base class of the table protocol's errors."""


class LogError(SessionError):
    """A log entry that cannot be accepted."""

    def __init__(
        self,
        reason: str,
        *,
        index: int | None = None,
        author: int | None = None,
        evidence: Sequence[bytes] = (),
    ) -> None:
        self.reason = reason
        self.index = index
        self.author = author
        self.evidence = tuple(evidence)
        where = f"entry {index}" if index is not None else "entry"
        who = f" by party {author}" if author is not None else ""
        super().__init__(f"{where}{who}: {reason}")

    def __reduce__(self) -> tuple[object, ...]:
        return (_rebuild, (type(self), self.reason, self.index, self.author, self.evidence))


def _rebuild(
    cls: type[LogError], reason: str, index: int | None, author: int | None, ev: tuple[bytes, ...]
) -> LogError:
    return cls(reason, index=index, author=author, evidence=ev)


class MalformedEntry(LogError):
    """Not a log entry: undecodable, non-canonical, missing or ill-typed fields, a bad body."""


class WrongTable(LogError):
    """A well-formed entry of another table or protocol version (a replay from elsewhere)."""


class BadSignature(LogError):
    """An entry whose signature does not verify under its author's identity key."""


class BrokenChain(LogError):
    """An entry whose index or previous-hash field does not continue this log."""


class OutOfTurn(LogError):
    """A signed entry the table's state machine does not allow from this author now."""


class Equivocation(LogError):
    """Two different signed entries by one author for the same log index: `evidence` holds both."""


class RejectedEntry(LogError):
    """An entry in its place whose content is wrong: a proof that fails, an illegal move, a
    commitment not opened, a wrong score or state hash."""
