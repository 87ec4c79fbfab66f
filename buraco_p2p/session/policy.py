"""The client's rules for void agreements: whom it names, when it proposes, what it joins.

The `Peer` says what a party *may* sign (docs/protocol.md 4.5: only parties its own clock saw
keep the step waiting, a proposal at its own point, ...); this module says what the client
*does*, the same for the network driver (`buraco_p2p.play.driver`), the simulator and the
tests, so the policy that runs at a real table is the one the simulator searches:

- A bot (`agree_any`) joins any proposal it may join; a person joins by choosing an action
  (`agree`), which also proposes when nobody has.
- When the table times out, one present party proposes, so that two present parties do not
  open rounds naming different silent sets: the lowest present party at once, and, if no
  proposal it may join has come by then, the next lowest half a timeout later, and so on.
  A proposal that does not count here (one for another point, or one naming us, or one that
  names a party we have not seen keep the table waiting) never stops us proposing: no single
  message from anyone disarms the table.
- It proposes to name only parties that are not catching up (`Peer.overdue`: their claims of
  the log advance, `buraco_p2p.session.presence`), but it joins a proposal naming any party
  its clock saw keep the step waiting past the timeout (`Peer.late`): a claim may reach some
  peers and not others, and a peer that held back where the others signed would be named
  by their retry (docs/protocol.md 4.5 R2).
- `void_action` is what this client proposes ("void", "end" or "replace"; None: it
  proposes nothing). "replace" goes through `replacer` (the host's: it seats new identities)
  and is "end" without one, or before the seats are drawn.

Pure, like all of `session/`: clock readings are passed in.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from buraco_p2p.session import bodies
from buraco_p2p.session.events import Event, TimedOut, VoidProposed
from buraco_p2p.session.output import Output
from buraco_p2p.session.peer import Peer

__all__ = ["Policy"]

log = logging.getLogger(__name__)

# The part of the table's timeout by which each present party's turn to propose follows the
# one before it (the lowest proposes at once).
FALLBACK_SHARE = 0.5


class Policy:
    """One client's agreement policy at one table."""

    def __init__(
        self,
        void_action: str | None = None,
        *,
        agree_any: bool = False,
        replacer: Callable[[tuple[int, ...]], str] | None = None,
    ) -> None:
        self.void_action = void_action
        self.agree_any = agree_any
        self.replacer = replacer
        self.waiting_on: tuple[int, ...] = ()  # the parties the table last timed out on
        self._timed: tuple[int, float] | None = None  # (log length, our clock) of a timeout
        self._proposed_at: int | None = None  # the log length we proposed at

    # -- what the peer told us -----------------------------------------------------------

    def react(self, peer: Peer, events: list[Event], now: float) -> Output:
        """Act on a peer's events: a timeout (propose or join), a proposal (join)."""
        out = Output()
        for ev in events:
            if isinstance(ev, TimedOut):
                self.waiting_on = ev.parties
                out.extend(self._step(peer, now))
            elif isinstance(ev, VoidProposed):
                out.extend(self.join(peer, now))
        return out

    def tick(self, peer: Peer, now: float) -> Output:
        """Now and then: join what we may, propose when it is our turn to."""
        return self._step(peer, now)

    def join(self, peer: Peer, now: float) -> Output:
        """Sign our part of the proposal at our point, if we agree to voids at all."""
        if (self.void_action is None and not self.agree_any) or peer.table.closed:
            return Output()
        if peer.agreement is None and peer.proposal is not None:
            return peer.join_void(now)
        return Output()

    def _step(self, peer: Peer, now: float) -> Output:
        out = self.join(peer, now)
        length = len(peer.log)
        # whom we would name: the parties our clock saw keep this step waiting that it still
        # waits for (one whose entry has come since is not gone)
        silent = tuple(sorted(set(peer.overdue) & set(peer.waiting)))
        if not silent or peer.agreement is not None or peer.table.closed:
            return out
        if self._timed is None or self._timed[0] != length:
            self._timed = (length, now)
        if self._proposed_at == length or self.void_action is None:
            return out
        present = [p for p in range(peer.table.n) if p not in silent]
        if peer.party not in present:
            return out
        rank = present.index(peer.party)
        limit = peer.table.terms.timeout_ms / 1000
        if now - self._timed[1] < rank * FALLBACK_SHARE * limit:
            return out
        self._proposed_at = length
        out.extend(self._propose(peer, silent, now))
        return out

    def _propose(self, peer: Peer, silent: tuple[int, ...], now: float) -> Output:
        action = self.void_action
        assert action is not None
        if action == bodies.REPLACE:
            if self.replacer is not None and peer.table.match is not None:
                log.info("%s", self.replacer(silent))
                return Output()
            # only the host can seat a new identity, and only once the seats are drawn
            # (before that, any void closes the log: 4.5, "Abandonment")
            action = bodies.END_ACTION
        try:
            return peer.propose_void(action, now, silent)
        except ValueError as exc:
            log.info("no void proposed: %s", exc)
            return Output()

    # -- a person's word -----------------------------------------------------------------

    def agree(self, peer: Peer, action: str, now: float) -> tuple[str, Output]:
        """A person's agreement to void the hand ("void"), end the match ("end") or replace
        the parties gone by bots ("replace", the host only) after a timeout: joins the round
        another present party opened at our point, or opens one naming the parties the table
        waits for. Either only once our own clock has seen those parties keep the current
        step waiting past the table's timeout. Returns what happened, in words, and the
        peer's output."""
        mine = peer.agreement
        if mine is not None:
            return f"already agreed to {mine.action} (missing: {self.names(peer, mine.silent)})", \
                Output()  # fmt: skip
        self.void_action = action
        prop = peer.proposal
        if prop is not None:
            out = peer.join_void(now)
            if peer.agreement is not None:
                return f"joined the agreement to {prop[0].action}", out
            if not set(prop[0].silent) <= peer.late:
                return (f"not yet: the table has not waited for {self.names(peer, prop[0].silent)} "
                        "past its timeout here"), out  # fmt: skip
        overdue = tuple(sorted(set(peer.overdue) & set(peer.waiting))) or tuple(
            sorted(peer.overdue)
        )
        if action == bodies.REPLACE:
            if self.replacer is None:
                return "no agreement proposed: only the host can seat a bot in a seat", Output()
            if peer.table.match is None:
                return ("no agreement proposed: a bot can take a seat only once the seats are "
                        "drawn (end closes the table)"), Output()  # fmt: skip
            return self.replacer(overdue), Output()
        try:
            out = peer.propose_void(action, now, overdue)
        except ValueError as exc:
            return f"no agreement proposed: {exc}", Output()
        self._proposed_at = len(peer.log)
        return f"proposed: {action}", out

    def choices(self, peer: Peer) -> dict[str, str]:
        """What each agreement would do now, in words, for a screen to offer (empty while
        nobody keeps the table waiting past its timeout, or once we agreed)."""
        if not peer.overdue or peer.agreement is not None or peer.table.closed:
            return {}
        names = self.names(peer, tuple(sorted(peer.overdue)))
        out = {
            "end": f"end the match now, {names} named as gone",
            "void": f"void this hand and deal again without waiting for {names}",
        }
        if self.replacer is not None and peer.table.match is not None:
            out["replace"] = f"void this hand and seat a bot for {names} from the next deal"
        return out

    @staticmethod
    def names(peer: Peer, parties: tuple[int, ...]) -> str:
        nicks = peer.table.terms.nicknames
        return ", ".join(nicks[p] for p in parties)
