"""The table protocol: one match as a signed, hash-chained log, sans-IO.

Nothing here touches a socket or a clock: entries and clock readings come in; entries to
send, entries to persist and events for a UI or a bot go out. The layers below do the work:
`engine` (the rules, over hidden card slots), `crypto.deck` (keys, shuffles, decryption
shares), `crypto.randomness` (commit-reveal), `net.identity` (Ed25519 signatures), `codec`
(canonical msgpack).

API overview:

- `make_genesis(table_id, identities, rules, timeout_ms=...)`: the first entry, signed by
  every party (its order is the party order); `parse_genesis(entry) -> Terms`.
- `Entry` (fields version, table, index, prev, author, kind, body, sig; `.wire` bytes,
  `.hash`), `decode_entry(bytes)`, `make_entry(identity, ...)`, `step_head(hashes)`: the log
  format (`buraco_p2p.session.entry` documents the encoding, hash and signature input;
  `buraco_p2p.session.bodies` every kind's body).
- `Peer(genesis, identity, rng, now, heir=False, minute=60.0)`: one party (or, with `heir`, a
  new identity that follows the log until a "replace" agreement passes a seat to it;
  `minute`: the units of `now` in a minute of a timed match's clock). `start(now)`,
  `receive(bytes, now)`, `play(move, now)`, `tick(now, linked)` (with `heard(key, n, now)`,
  a party's claim of the log it holds: `presence`), `propose_void(action, now, silent,
  keys)`, `join_void(now)` (with `proposal` and `agreement`; the bookkeeping is in
  `agreement`), and `busy`/`work(now)` for a host that wants to send before the next
  expensive check. Each returns an `Output`
  (`send`: wire bytes for every other party, `persist`: entries appended in log order,
  `events`, `relay`: entries first heard from others). `peer.table` is its `Table`
  (`.view`: the engine view of the current hand, `.log`, `.phase`, `.match`).
- `Table(genesis, me=None, rng=None)`: the state machine every check lives in, shared by
  peers and the verifier; `apply(entry)` raises a `LogError` subclass naming the first bad
  entry's index, its author (party) and the reason, with the signed entry as evidence.
- `replay(entries) -> Replay`: the verifier-only path (no secrets): the same `Table`, fed a
  whole log; `Replay` holds the table, hands, entries, shuffles verified, scores, the opened
  cards of every finished hand and the parties' fingerprints.
- `check_equivocation(genesis, a, b, key=None)` and `confirm_refusal(log, entry)`: a third
  party checks a refusal's evidence with the log alone (`key`: the author's key in force at
  that index, after a "replace"; `Table.key_at` gives it).
- `states.TRANSITIONS`: the transition table (phase -> kind, who appends, round or single,
  next phases).
- Events (`buraco_p2p.session.events`): `SeatsDrawn`, `HandStarted`, `CardSeen`,
  `YourTurn`, `MoveApplied`, `HandEnded`, `TimeUp`, `MatchEnded`, `TimedOut`,
  `VoidProposed`, `Voided`, `Abandoned`, `Refused` (an entry dropped, the table goes on),
  `Fault` (an entry refused with evidence; the table accepts only a void agreement after it),
  `Rewrite` (a second entry signed for a final index: kept as evidence, nothing changes).
- `Router(peers, choose, relay=..., tamper=..., shuffle=...)`: a deterministic in-memory
  table (tests, self-play): FIFO or seeded-random delivery, optional relaying, tampering,
  silent and manual parties, a clock moved by `advance`.

Modules: `entry` (format, hash, signature, step heads), `bodies` (kinds and schemas),
`terms` (genesis), `states` (transition table), `table` (the log gate: what every entry
shares), `checks` (each kind's content checks), `flow` (the next step), `tablestate` (the
table as those helpers see it), `deal` (one deal's
state, the verifier's opening of a finished hand), `produce` (our own entries), `peer`,
`inbox` (what a peer heard and holds), `voter` (its void agreements), `presence` (who is
catching up), `agreement` (the void
entries it holds), `output`, `replay`, `evidence`, `router`, `events`, `errors`.

The order of a hand, each line one step (a round where several parties append, by party):
keys round (hand key + cut commitment, all) -> shuffle by seat 0 .. shuffle by seat N-1 ->
deal round (shares for the other hands and the face-up card + cut nonce, all) -> then per
turn: move (the mover's own shares for what it shows) [-> shares round by the parties that
owe a private reveal: a drawn card, a pot] ... -> count round (shares opening every hand
card, all) -> result round (totals + state hash, all) -> open round (hand secret, all) ->
next hand's keys round, or the final round (scores, all) and the log is closed. In a match
with a time limit (rule `minutes`), a round of clocks (all) follows the open round until the
time is up (`flow.time_is_up`; `Peer.clock_ms` is what a party reports). Before the
first hand: the genesis, a seat-draw commit round and its reveal round.

Parties and seats: a party is an identity's position in the genesis and signs as `author`;
the seat draw (commit-reveal) maps seats to parties (`table.seating[seat] -> party`,
`table.party_seat[party] -> seat`); the engine and the deck speak of seats.
"""

from buraco_p2p.session.entry import Entry, decode_entry, make_entry, step_head
from buraco_p2p.session.errors import (
    BadSignature,
    BrokenChain,
    Equivocation,
    LogError,
    MalformedEntry,
    OutOfTurn,
    RejectedEntry,
    SessionError,
    WrongTable,
)
from buraco_p2p.session.events import (
    Abandoned,
    CardSeen,
    Event,
    Fault,
    HandEnded,
    HandStarted,
    MatchEnded,
    MoveApplied,
    Refused,
    Rewrite,
    SeatsDrawn,
    TimedOut,
    TimeUp,
    Voided,
    VoidHeld,
    VoidProposed,
    YourTurn,
)
from buraco_p2p.session.evidence import check_equivocation, confirm_refusal
from buraco_p2p.session.peer import Output, Peer
from buraco_p2p.session.replay import Replay, replay
from buraco_p2p.session.router import Router
from buraco_p2p.session.states import TRANSITIONS, Phase
from buraco_p2p.session.table import Table
from buraco_p2p.session.terms import Terms, make_genesis, parse_genesis

__all__ = [
    "TRANSITIONS",
    "Abandoned",
    "BadSignature",
    "BrokenChain",
    "CardSeen",
    "Entry",
    "Equivocation",
    "Event",
    "Fault",
    "HandEnded",
    "HandStarted",
    "LogError",
    "MalformedEntry",
    "MatchEnded",
    "MoveApplied",
    "OutOfTurn",
    "Output",
    "Peer",
    "Phase",
    "Refused",
    "RejectedEntry",
    "Replay",
    "Rewrite",
    "Router",
    "SeatsDrawn",
    "SessionError",
    "Table",
    "Terms",
    "TimeUp",
    "TimedOut",
    "VoidHeld",
    "VoidProposed",
    "Voided",
    "WrongTable",
    "YourTurn",
    "check_equivocation",
    "confirm_refusal",
    "decode_entry",
    "make_entry",
    "make_genesis",
    "parse_genesis",
    "replay",
    "step_head",
]
