"""Another party's agreement to void, end or replace, as this screen tells it.

A void agreement another party proposed is told from its arrival: what it is, the key that
joins it, or why our driver will not (the parties it names are not late at our clock), and
the time left, twice the table's timeout from when we saw it, before the others may name us
too if we neither agree nor play on (docs/protocol.md 4.5, "Retries"). `Proposals` keeps the
one thing this needs beside the session: when we first saw the proposal we hold. The words
are the line client's (`buraco_p2p.text.agreement`).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from buraco_p2p.play.driver import Driver
from buraco_p2p.session import TimedOut, VoidProposed
from buraco_p2p.session.agreement import RETRY_TIMEOUTS
from buraco_p2p.text.agreement import not_late_text, proposal_text, warning_text
from buraco_p2p.ui.feed import Proposal

__all__ = ["Proposals"]


class Proposals:
    """The proposal our driver holds and has not signed, for the screen; `nick(party)`
    names a party."""

    def __init__(self, nick: Callable[[int], str]) -> None:
        self.driver: Driver | None = None
        self._nick = nick
        self._key: tuple[int, str, tuple[int, ...]] | None = None
        self._seen = time.monotonic()

    def track(self) -> None:
        """Note when we first saw the proposal we hold and have not signed."""
        d = self.driver
        prop = d.peer.proposal if d is not None else None
        if d is None or prop is None or d.peer.agreement is not None:
            self._key = None
            return
        motion, author = prop
        key = (author, motion.action, motion.silent)
        if key != self._key:
            self._key = key
            self._seen = time.monotonic()

    def current(self) -> Proposal | None:
        """The proposal for the screen, while we hold one we have not signed."""
        d = self.driver
        key = self._key
        if d is None or key is None:
            return None
        author, action, silent = key
        named_me = d.peer.party in silent
        return Proposal(
            by=self._nick(author),
            action=action,
            silent=tuple(self._nick(p) for p in silent),
            deadline=self._seen + self.retry_after(),
            blocked="" if named_me else self.blocked(silent),
            named_me=named_me,
        )

    def line(self, ev: VoidProposed) -> str:
        """The feed's line for another party's proposal: what it is, what our keys do about
        it (or why we cannot agree), and when the others may name us too."""
        by = self._nick(ev.party)
        d = self.driver
        if d is not None and d.peer.party in ev.silent:
            return (f"{by} proposes to {ev.action} naming you as gone: it needs the others, "
                    "who join only if your moves stop reaching them")  # fmt: skip
        text = proposal_text(by, ev.action, [self._nick(p) for p in ev.silent])
        blocked = self.blocked(ev.silent)
        warn = warning_text(self.retry_after())
        if blocked:
            return f"{text}; you cannot agree: {blocked}; {warn}"
        return f"{text}: {ev.action[0].upper()} agrees; {warn}"

    def timed_out_line(self, ev: TimedOut) -> str:
        """The feed's line for a wait past the table's limit: the keys that end it, or the
        one that joins the proposal we hold (any key joins it as it stands)."""
        names = ", ".join(self._nick(p) for p in ev.parties)
        prop = self.current()
        if prop is not None and not prop.named_me and not prop.blocked:
            what = proposal_text(prop.by, prop.action, prop.silent)
            return (f"waiting for {names} past the table's limit ({ev.waited:.0f} s): you "
                    f"can agree now ({what}): {prop.action[0].upper()} agrees")  # fmt: skip
        return (f"waiting for {names} past the table's limit ({ev.waited:.0f} s): E ends the "
                "match, V voids the hand, R seats bots")  # fmt: skip

    def retry_after(self) -> float:
        """Twice the table's timeout, in seconds: how long a signer of a void waits for the
        others' signatures before it names the parties that did not sign (4.5, R2)."""
        d = self.driver
        return RETRY_TIMEOUTS * d.peer.table.terms.timeout_ms / 1000 if d is not None else 0.0

    def blocked(self, silent: tuple[int, ...]) -> str:
        """Why our driver will not join a proposal naming `silent` ("" if it would): it signs
        only for parties our own clock has seen keep the step waiting past the timeout (the
        author of a fault aside), the rule `Driver.agree` and the session apply."""
        d = self.driver
        if d is None:
            return "the table is not set up yet"
        t = d.peer.table
        if not t.can_void(silent):
            return ""
        nameable = set(d.peer.late)
        if t.fault is not None and t.fault.author is not None:
            nameable.add(t.fault.author)
        waited = set(t.waiting_for)
        return "; ".join(not_late_text(self._nick(p), p in waited,
                                       d.mesh.is_up(t.terms.keys[p]))
                         for p in silent if p not in nameable)  # fmt: skip
