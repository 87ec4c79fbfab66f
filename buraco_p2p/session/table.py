"""The table: one match's log replayed through the state machine, by a seat or a verifier.

`Table` is the single implementation of the protocol's checks. A peer (`Peer`) feeds it every
entry of the log, its own included, and asks it what it owes next; an offline verifier
(`replay`) feeds it a log file with `me=None`, no secrets. Each entry is checked in full
before it counts: version and table id, index, previous step head, author (the transition
table, `buraco_p2p.session.states`), signature, the body's schema, then its content (key,
shuffle and share proofs through the deck, commitments, the move through the engine, the
score; `buraco_p2p.session.checks`). When a step is complete, `buraco_p2p.session.flow`
begins the next one. A refused entry raises a `LogError` naming its author, with the signed entry as
evidence; the table then accepts no further entry but a void agreement.

Validate before reveal: a move is checked (author on turn, the move's seat, the slots it shows
held by the mover) before anything of it is applied, and this peer's shares for it are made
only after the engine has accepted it (`produce`, called after `apply`).
"""

from __future__ import annotations

import bisect
import hashlib
from typing import Any, Final

from buraco_p2p.crypto.group import RandomSource
from buraco_p2p.crypto.proofcheck import CHECK_NOW, ProofChecks
from buraco_p2p.crypto.randomness import CoinContext, CommitReveal, new_nonce
from buraco_p2p.engine import HandState, IllegalMove, IllegalMoveCode, Match, Move
from buraco_p2p.net.channel.identity import PeerKey
from buraco_p2p.session import bodies
from buraco_p2p.session.agreement import majority
from buraco_p2p.session.bodies import BodyError, check_body
from buraco_p2p.session.checks import Refusal, check_entry, check_move
from buraco_p2p.session.deal import Deal
from buraco_p2p.session.entry import PROTOCOL_VERSION, Entry, step_head
from buraco_p2p.session.errors import (
    BadSignature,
    BrokenChain,
    LogError,
    MalformedEntry,
    OutOfTurn,
    RejectedEntry,
    WrongTable,
)
from buraco_p2p.session.events import Event
from buraco_p2p.session.flow import VoidRecord, next_step
from buraco_p2p.session.produce import SEATS, produce_entry, produce_move
from buraco_p2p.session.states import TRANSITIONS, VOID_RULE, Phase, Rule
from buraco_p2p.session.terms import Terms, parse_genesis

__all__ = ["CHAIN_TAG", "SEATS", "Table"]

CHAIN_TAG: Final = b"buraco-p2p/log/v1/chain\x00"


class Table:
    """One match's log through the state machine, as seat `me` (party index) or as a verifier.

    `me` is this peer's party (its position in the genesis); `rng` its private random source
    (nonces, hand keys, proofs). A verifier passes neither. An heir (an identity that is to
    take a seat over by a "replace" agreement) passes `heir`: its identity key and random
    source; it follows the log as a verifier and becomes that party when the agreement that
    names its key is applied.
    """

    def __init__(
        self,
        genesis: Entry,
        *,
        me: int | None = None,
        rng: RandomSource | None = None,
        heir: tuple[bytes, RandomSource] | None = None,
        checks: ProofChecks = CHECK_NOW,
    ) -> None:
        self.terms: Terms = parse_genesis(genesis)
        n = self.terms.parties
        if me is not None and not 0 <= me < n:
            raise ValueError(f"party {me} is not one of the {n} parties")
        if (me is None) != (rng is None):
            raise ValueError("a party needs a random source; a verifier none")
        self.n = n
        self.me = me
        self.rng = rng
        self.checks = checks  # who runs each hand's deck proof checks (verify --jobs)
        self.rules = self.terms.rules
        self.log: list[Entry] = [genesis]
        # A running hash of every entry applied: what keys a peer's randomness to its log
        # (`chain`), so that two different logs of one length never draw the same secret.
        self._chain = [hashlib.sha256(CHAIN_TAG + genesis.hash).digest()]
        # Each party's coverage: the start of the latest step that holds an entry of its
        # (its `p` commits it to every entry before that step), or the point of the latest
        # complete void round that names it silent. The settled point is the lowest
        # (`settled`).
        self.cover: list[int] = [1] * n
        self.building_on = b""  # the hash of an entry we build on before it is applied
        self.steps: list[int] = [0, 1]  # where each step began (a void round is one too)
        # the settled point of the log as it stood when each step of `steps` began: what an
        # entry of that step commits its author to (`final`)
        self.settles: list[int] = [0, 1]
        self.phase = Phase.SEATS_COMMIT
        self.step_prev = step_head([genesis.hash])
        self.step_start = 1
        self.step_hashes: list[bytes] = []
        self.authors: tuple[int, ...] = tuple(range(n))
        self.fault: LogError | None = None
        self.seating: tuple[int, ...] = ()
        self.party_seat: tuple[int, ...] = ()
        self.match: Match | None = None
        self.hand: Deal | None = None
        self.hands_played = 0
        self.shuffles_verified = 0
        self.opened: list[tuple[int, ...]] = []  # verifier: every finished hand's cards
        self.silent: tuple[int, ...] = ()
        self.voiding: str | None = None
        self.void_keys: tuple[bytes, ...] = ()
        self.void_try = 0  # the try of the void round under way (4.5)
        self.void_held: tuple[int, ...] = ()  # its silent parties the table did not wait for
        self.voids: list[VoidRecord] = []  # every void round applied, as `flow` judged it
        # Each party's identity key now: the genesis's, then its successors' ("replace").
        self.keys: list[PeerKey] = list(self.terms.keys)
        self.successions: list[tuple[int, int, PeerKey]] = []  # (log index, party, new key)
        self.heir = heir if me is None else None
        # an heir's own identity key, kept once it is seated: a roll-back that cuts the
        # "replace" round seating it makes it an heir again (`rollback`)
        self.heir_key: bytes | None = heir[0] if heir is not None and me is None else None
        # An equivocation detected at an index the log has not reached: the table stops
        # there (`stop_at`). After a roll-back, this party's own place, taken up again when
        # the void round that follows is complete.
        self.stop: LogError | None = None
        self._resume: tuple[int, RandomSource] | None = None
        self.seat_draw = CommitReveal(CoinContext(self.terms.table_id, SEATS, 0), n)
        self.seat_nonce = new_nonce(rng) if rng is not None else None

    # ------------------------------------------------------------------ queries

    @property
    def rule(self) -> Rule:
        return VOID_RULE if self.voiding is not None else TRANSITIONS[self.phase]

    @property
    def closed(self) -> bool:
        return self.phase is Phase.CLOSED

    @property
    def settled(self) -> int:
        """How many entries of the log are settled (docs/protocol.md 4.6): every party has
        built on them, since the `p` of each party's latest entry commits its author to
        every entry before that entry's step (a party a complete void round named silent is
        covered up to that round's point: the round's signers, a majority, committed to what
        is before it). A closed log is settled as a whole. A peer never cuts its log back
        below this point; but a party that signed a void and then gave it up built on both
        outcomes of one point, so a settled entry is not yet one every honest peer holds."""
        if self.closed:
            return len(self.log)
        return min(self.cover)

    @property
    def final(self) -> int:
        """How many entries of the log are final: every party has built on a step before
        which they were settled (a party named silent: the round that names it was signed on
        such a step). Every honest party then held them settled in its own log, which it
        never cuts back below, so every honest peer holds them for good (docs/protocol.md
        4.6): the final prefixes of two honest peers never differ."""
        steps, settles = self.steps, self.settles
        return min(settles[bisect.bisect_right(steps, c) - 1] for c in self.cover)

    @property
    def chain(self) -> bytes:
        """A hash of the whole log: what a peer's randomness is keyed to, so that a log cut
        back and grown again differently never draws again what was drawn for the first."""
        return self._chain[-1]

    def chain_at(self, length: int) -> bytes:
        """The hash of the log's first `length` entries (`chain` when the log was that long)."""
        return self._chain[length - 1]

    def draw_key(self) -> bytes:
        """Where this party's randomness is drawn now (a keyed random source's key): the
        log's hash, and the entry a draw builds on before it is applied (`building_on`, a
        shuffle made ahead on the previous one, 4.4 step 2)."""
        return self.chain + self.building_on

    @property
    def waiting_for(self) -> tuple[int, ...]:
        """Parties whose entries the current step still needs, in log order."""
        return self.authors[len(self.step_hashes) :]

    def index_of(self, party: int) -> int | None:
        """The log index of `party`'s entry in the current step, if it owes one."""
        if party not in self.waiting_for:
            return None
        return self.step_start + self.authors.index(party)

    def expected_author(self, index: int) -> int | None:
        k = index - self.step_start
        return self.authors[k] if 0 <= k < len(self.authors) else None

    @property
    def view(self) -> HandState | None:
        return self.hand.view if self.hand is not None else None

    @property
    def my_seat(self) -> int | None:
        if self.me is None or not self.party_seat:
            return None
        return self.party_seat[self.me]

    def seat_of(self, party: int) -> int:
        return self.party_seat[party]

    # ------------------------------------------------------------------ applying entries

    def key_at(self, party: int, index: int) -> PeerKey:
        """The identity key in force for `party`'s entry at log index `index`: its genesis
        key, then from the index after each "replace" round that passed its seat, the key
        that round named. Only an applied round changes it (a proposal gives no key any
        standing); for an index past the log, it is the key in force now."""
        key = self.terms.keys[party]
        for at, p, k in self.successions:
            if p == party and index > at:
                key = k
        return key

    def keys_at(self, index: int) -> tuple[PeerKey, ...]:
        """Every party's key in force at log index `index` (see `key_at`)."""
        if not self.successions or index >= len(self.log):
            return tuple(self.keys)
        return tuple(self.key_at(p, index) for p in range(self.n))

    def apply(
        self, entry: Entry, *, own: bool = False, signed: PeerKey | None = None
    ) -> list[Event]:
        """Check one entry in its place and apply it; raise `LogError` naming its author,
        and nothing else, whatever the entry holds.

        `own`: the entry was made and signed by this peer (its signature and proofs need no
        checking); `signed`: the identity key its signature was checked under on receipt,
        which spares the check only if it is the author's key in force at the entry's index
        (`key_at`): an entry signed under a key since replaced is refused as any forgery is.
        After a refusal the table is faulted and refuses everything but a void.
        """
        mark = self._mark()
        try:
            return self._apply(entry, own, signed)
        except Refusal as r:
            err = r.cls(r.reason, index=entry.index, author=entry.author, evidence=(entry.wire,))
        except LogError as e:
            err = e
        except Exception as exc:  # the boundary: only a LogError leaves
            # A check or the flow failed in a way no refusal describes: the entry is refused
            # in its place (the log and the step stand as before it), the table stops.
            self._restore(mark)
            err = RejectedEntry(
                f"the entry cannot be applied here ({type(exc).__name__}: {exc})",
                index=entry.index, author=entry.author, evidence=(entry.wire,),
            )  # fmt: skip
            self.fault = self.fault or err
            raise err from None
        # A bad signature proves nothing against the party it names (anybody can send one),
        # nor does an entry that does not continue this log (our own too: one made for a
        # step a void round then closed): the table goes on.
        if not isinstance(err, BadSignature | BrokenChain | WrongTable | OutOfTurn):
            self.fault = self.fault or err
        raise err

    def _mark(self) -> tuple[Any, ...]:
        """The log's length and the step's bookkeeping, to put back if applying fails."""
        return (len(self.log), self.phase, self.authors, self.step_prev, self.step_start,
                list(self.step_hashes), self.voiding, self.silent, self.void_keys,
                self.void_try, list(self.cover), list(self.steps),
                list(self.settles))  # fmt: skip

    def _restore(self, mark: tuple[Any, ...]) -> None:
        length, self.phase, self.authors, self.step_prev, self.step_start, hashes = mark[:6]
        self.step_hashes = hashes
        (self.voiding, self.silent, self.void_keys, self.void_try, self.cover,
         self.steps, self.settles) = mark[6:]
        del self.log[length:]
        del self._chain[length:]

    def _apply(self, entry: Entry, own: bool, signed: PeerKey | None) -> list[Event]:
        if entry.version != PROTOCOL_VERSION or entry.table != self.terms.table_id:
            raise Refusal(WrongTable, "entry of another table or protocol version")
        if entry.index != len(self.log):
            raise Refusal(BrokenChain, f"index {entry.index}, the log is at {len(self.log)}")
        if self.closed:
            raise Refusal(OutOfTurn, "the log is closed")
        if self.fault is not None and entry.kind != bodies.VOID:
            raise Refusal(OutOfTurn, f"the table stopped at a fault: {self.fault}")
        if (
            self.stop is not None
            and entry.index >= (self.stop.index or 0)
            and entry.kind != bodies.VOID
        ):
            raise Refusal(OutOfTurn, f"the table stops at an equivocation: {self.stop}")
        saved = None
        if entry.kind == bodies.VOID:
            # Its schema first (4.2): a void round opens on what the body says, so a body
            # that breaks it is malformed wherever it stands, never merely out of turn.
            try:
                check_body(bodies.VOID, entry.body, self.n, self.rules.deck_size)
            except BodyError as exc:
                raise Refusal(MalformedEntry, str(exc)) from None
        if entry.kind == bodies.VOID and self.voiding is None:
            saved = (self.authors, self.step_prev, self.step_start, self.step_hashes, self.silent,
                     list(self.steps), list(self.settles))  # fmt: skip
            self.void_keys = ()
            self.void_try = 0
            self._open_void(entry)
        try:
            return self._apply_in_step(entry, own, signed)
        except BaseException:
            if saved is not None and self.voiding == "pending":
                self.voiding = None
                (self.authors, self.step_prev, self.step_start, self.step_hashes, self.silent,
                 self.steps, self.settles) = saved
            raise

    def _apply_in_step(self, entry: Entry, own: bool, signed: PeerKey | None) -> list[Event]:
        if self.expected_author(entry.index) != entry.author:
            raise Refusal(OutOfTurn, f"not this party's turn to append ({self.phase.value})")
        if entry.prev != self.step_prev:
            raise Refusal(BrokenChain, "previous hash does not name the step before")
        if not own and signed != self.keys[entry.author]:
            entry.verify(tuple(self.keys))
        rule = self.rule
        if entry.kind != rule.kind:
            why = f"a {entry.kind!r} entry where {rule.kind!r} is expected"
            if entry.kind == bodies.TIME and not self.rules.minutes:
                why += " (this match has no time limit: rule minutes=0)"
            raise Refusal(OutOfTurn, why)
        try:
            parsed = check_body(entry.kind, entry.body, self.n, self.rules.deck_size)
        except BodyError as exc:
            raise Refusal(MalformedEntry, str(exc)) from None
        events = check_entry(self, entry, parsed)
        self.log.append(entry)
        self._chain.append(hashlib.sha256(self._chain[-1] + entry.hash).digest())
        self.cover[entry.author] = max(self.cover[entry.author], self.step_start)
        self.step_hashes.append(entry.hash)
        if len(self.step_hashes) == len(self.authors):
            if self.voiding is not None:
                for p in self.silent:  # the round's signers speak for the silent
                    self.cover[p] = max(self.cover[p], self.step_start)
            self.step_prev = step_head(self.step_hashes)
            self.step_hashes = []
            self.step_start = len(self.log)
            self._step_begins()
            if self.voiding is not None and self._resume is not None:
                # The round after a roll-back: this party plays again from the next hand.
                (self.me, self.rng), self._resume = self._resume, None
            events.extend(next_step(self))
        if self.stop is not None and len(self.log) >= (self.stop.index or 0):
            if self._takes(self.stop.index or 0, self.stop.author):  # else they cannot apply
                self.fault = self.fault or self.stop
            self.stop = None
        return events

    # ------------------------------------------------------------------ equivocation

    def stop_at(self, err: LogError) -> None:
        """An equivocation (`err`, two entries its author signed for `err.index`) at the end
        of the log or ahead of it: the table stops there, and the void round that names the
        equivocator starts there, at the same point at every honest peer; but only if the
        log takes the equivocator's entry there (`_takes`, judged when the log gets there).
        Entries that could never be applied there are evidence only (kept by the peer): a
        peer whose log went past that index holds another party's entry there, which they
        do not contradict, so stopping here would part us from it; and a void naming their
        author there would not check for a verifier, which holds no evidence. (One behind
        the end is the peer's to judge: it may be final, `Peer`.)"""
        index = err.index
        if index is None or index < len(self.log):
            return
        if len(self.log) == index:
            if not self._takes(index, err.author):
                return  # neither entry could be applied here: evidence, and no stop
            if self.fault is None or self.fault.author != err.author:
                self.fault = err
        elif self.fault is None and (self.stop is None or (self.stop.index or 0) > index):
            self.stop = err

    def _takes(self, index: int, author: int | None) -> bool:
        """Whether the log, whose end is at `index`, takes an entry of `author` there that is
        not a void: it is that author's place in the step under way, and no void round is
        under way (which takes only its own entries)."""
        return self.voiding is None and author is not None and self.expected_author(index) == author

    def rewound(self, length: int, *, seated: bool = True) -> Table:
        """A new table holding this one's first `length` entries, as if the rest had never
        come: the prefix is replayed from the genesis as a verifier (no secret of ours is
        needed, nor made again). Only a void round follows a roll-back (docs/protocol.md
        4.6); this party takes its place again when that round is complete, with fresh hand
        keys from its random source, which never draws for one log what it drew for another
        (`draw_key`). Nothing here changes until the caller `become`s it. Not `seated`: a
        verifier's table only, to try what the log cut back would take."""
        if not 1 <= length <= len(self.log):
            raise ValueError(f"cannot roll a log of {len(self.log)} back to {length}")
        me, rng = (self.me, self.rng) if self.me is not None else self._resume or (None, None)
        heir = self.heir
        if self.heir_key is not None and heir is None and rng is not None and not any(
            at < length and key.raw == self.heir_key for at, _, key in self.successions
        ):
            # an heir the prefix does not seat: the round that seats it comes again. One it
            # seats replays its own entries from the log, as any party does
            heir = (self.heir_key, rng)
        fresh = Table(self.log[0], heir=heir, checks=self.checks)
        for e in self.log[1:length]:
            fresh.apply(e, signed=fresh.key_at(e.author, e.index))
        fresh.heir_key = fresh.heir_key or self.heir_key
        if not seated or me is None or rng is None or fresh.me is not None:
            return fresh  # a verifier; or an heir the prefix seats again itself
        # This party takes its place again only if the prefix leaves it the seat: a
        # "replace" round the roll-back cut gives the seat back to the key before it.
        key = self.heir_key if self.heir_key is not None else self.terms.keys[me].raw
        if fresh.keys[me].raw == key:
            fresh._resume = (me, rng)
        return fresh

    def become(self, other: Table) -> None:
        """Take `other`'s state (a `rewound` table grown as far as it should): whoever holds
        this table sees the log as it now stands."""
        self.__dict__.update(other.__dict__)

    def prev_at(self, point: int) -> bytes:
        """The `p` a void round at `point` (a log length up to ours) names: the head of the
        entries its interrupted step has before that point, or of the last complete step."""
        if not 1 <= point <= len(self.log):
            raise ValueError(f"no point {point} in a log of {len(self.log)}")
        k = bisect.bisect_right(self.steps, point) - 1
        start = self.steps[k]
        if start < point:
            return step_head([e.hash for e in self.log[start:point]])
        before = self.steps[k - 1]
        return step_head([e.hash for e in self.log[before:start]])

    def void_prev(self) -> bytes:
        """What a void agreement names as `p`: it closes the step under way where it stands
        (the head of the entries that step has so far), or follows the last complete step."""
        return step_head(self.step_hashes) if self.step_hashes else self.step_prev

    def _open_void(self, entry: Entry) -> None:
        """A void agreement may start at any point: its authors are every party but the
        silent ones it names, which must be parties the table is waiting for or the author
        of the fault that stopped it (the body is checked again by its schema)."""
        silent = entry.body.get("silent")
        attempt = entry.body.get(bodies.TRY, 0)
        if not isinstance(silent, list) or type(attempt) is not int:
            return
        if not self.can_void(silent, attempt):
            return
        self.void_held = tuple(sorted(set(silent) - self._blamable()))
        active = tuple(p for p in range(self.n) if p not in silent)
        self.voiding = "pending"
        self.silent = tuple(sorted(set(silent)))
        self.step_prev = self.void_prev()
        self.step_hashes = []
        self.step_start = len(self.log)
        if self.steps[-1] != self.step_start:
            self._step_begins()
        self.authors = active

    def _step_begins(self) -> None:
        """Record where the step under way began, and how far the log was settled then."""
        self.steps.append(self.step_start)
        self.settles.append(min(self.cover))

    def can_void(self, silent: list[int] | tuple[int, ...], attempt: int = 0) -> bool:
        """Whether a void round may start here naming `silent`: parties the table waits for
        (or the author of the fault that stopped it), leaving a majority to sign it
        (`majority`), before the final round (whose round, once begun, only its entries
        close: a void there could close one peer's log while another's closes by the
        entries it has). A retry (`attempt` > 0) may also name parties that did not sign the
        try before it, which the log cannot show: it must name at least one party the table
        waits for."""
        if self.phase in (Phase.GENESIS, Phase.FINAL, Phase.CLOSED) or not silent:
            return False
        if not all(type(p) is int and 0 <= p < self.n for p in silent):
            return False
        blamable = self._blamable()
        named = set(silent) <= blamable if attempt == 0 else bool(set(silent) & blamable)
        return (
            named
            and 0 <= attempt < self.n
            and len(set(silent)) < self.n
            and majority(self.n, silent)
        )

    def _blamable(self) -> set[int]:
        """The parties a void here may name as keeping the table waiting: those the step
        waits for, and the author of the fault that stopped the table."""
        blamable = set(self.waiting_for)
        if self.fault is not None and self.fault.author is not None:
            blamable.add(self.fault.author)
        return blamable

    def check_move(self, seat: int, move: Move) -> tuple[int, ...]:
        """Validate before reveal: what a move by `seat` must pass before any card of it is
        shown (see `buraco_p2p.session.checks.check_move`); returns the slots it shows."""
        return check_move(self, seat, move)

    # ------------------------------------------------------------------ producing entries

    def produce(self) -> tuple[int, str, dict[str, Any]] | None:
        """The entry this party owes in the current step, if any but a move: (index, kind,
        body). Call once per step; a move comes from `move_body`."""
        return produce_entry(self)

    def move_body(self, move: Move) -> tuple[int, dict[str, Any]]:
        """The body of our own move (see `buraco_p2p.session.produce.move_body`); raises
        `IllegalMove` for a move that would be refused, which then changes nothing."""
        try:
            return produce_move(self, move)
        except Refusal as r:
            seat = self.my_seat
            raise IllegalMove(_code_for(r), r.reason, seat) from None


def _code_for(r: Refusal) -> IllegalMoveCode:
    return IllegalMoveCode.WRONG_PLAYER if r.cls is OutOfTurn else IllegalMoveCode.NOT_HELD
