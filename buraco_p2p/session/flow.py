"""Which step follows a complete one: the hand's flow and the match's, as the game decides it.

`buraco_p2p.session.states.TRANSITIONS` says, for each phase, which kind is expected, who
appends it and which phases may follow; this module picks among those `then` phases once a
step is complete, from what the game says (the seat draw's seed seats the parties, the deck
names the next shuffler, the engine names the seat on turn and whether the hand has ended, the
deck which parties owe shares, the match whether it is over), and sets the authors of the next
step. It starts each hand (a fresh hand key, deck and cut draw) and closes the match. It
checks nothing: every entry was checked in full before its step could complete.

A complete void round (`_voided`) is judged by where it interrupted the match, from the log
alone (docs/protocol.md 4.5, "Abandonment"; docs/rules.md, "Abandoning a hand"):

1. before the seats are drawn, the log closes;
2. before the deal (keys, shuffles), nobody has seen a card: "void" deals again with the
   same dealer, "replace" passes the seats first, "end" closes the log;
3. once the hand is counted (result, open, time, final rounds), the hand is complete in the
   log and is scored whatever signatures are missing; a match that is then decided closes
   with its result, whatever the action; otherwise as in 2, the deal having passed;
4. from the deal to the count, the silent parties could see their cards: they abandoned the
   hand. A silent party with a partner (same side) among the signers is proven to have
   walked out, and its side is charged (`Match.abandon`); a silent party the signers'
   word alone names proves nothing and costs nothing. "void" deals again only when every
   silent party paid; otherwise it closes the log (no free redeal for a walker nobody can
   prove); "replace" passes the seats and deals again (the walkers are gone); "end" closes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from buraco_p2p.crypto.deck import DeckSession
from buraco_p2p.crypto.keys import KeyPair
from buraco_p2p.crypto.randomness import (
    CoinContext,
    CommitReveal,
    new_nonce,
    permutation,
    uniform_choice,
    uniform_int,
)
from buraco_p2p.engine import HandState, Match, PlayerView, deal_layout, score_hand
from buraco_p2p.net.channel.identity import PeerKey
from buraco_p2p.session.bodies import REPLACE
from buraco_p2p.session.checks import reveal_cards
from buraco_p2p.session.deal import Deal
from buraco_p2p.session.events import (
    Abandoned,
    Event,
    HandEnded,
    HandStarted,
    MatchEnded,
    SeatsDrawn,
    TimeUp,
    Voided,
    YourTurn,
)
from buraco_p2p.session.produce import CUT
from buraco_p2p.session.states import Phase, Who
from buraco_p2p.session.tablestate import VoidRecord

if TYPE_CHECKING:
    from buraco_p2p.session.tablestate import TableState

__all__ = ["VoidRecord", "next_step"]

# Where a void round's point falls, as `VoidRecord.stage` says it.
BEFORE_SEATS = "before_seats"  # the seat draw: the log closes
BEFORE_DEAL = "before_deal"  # keys and shuffles: nobody has seen a card
IN_HAND = "in_hand"  # the deal to the count: the silent parties abandoned the hand
SCORED = "scored"  # the hand is counted: it is scored (and the match may be decided)

_IN_HAND = (Phase.DEAL, Phase.TURN, Phase.REVEAL, Phase.COUNT)
_SCORED = (Phase.RESULT, Phase.OPEN, Phase.TIME, Phase.FINAL)


def next_step(t: TableState) -> list[Event]:
    """Begin the step that follows the one just completed; returns the events it causes.
    The phase it moves to is always one the transition table lists after the last, and
    its authors fit the new phase's row."""
    rule = t.rule
    events = _next(t)
    # The flow only chooses among what the transition table allows: the next phase, and
    # authors of the shape its row gives (pragma: the table and this flow never disagree).
    if t.phase not in rule.then:  # pragma: no cover
        raise AssertionError(f"{rule.kind!r} is not followed by {t.phase.value!r}")
    if not t.closed:
        now = t.rule
        if now.who is Who.ALL and t.authors != tuple(range(t.n)):  # pragma: no cover
            raise AssertionError(f"{now.kind!r} is a round of every party, not {t.authors}")
        if not now.round and len(t.authors) != 1:  # pragma: no cover
            raise AssertionError(f"{now.kind!r} is one entry, not a round of {t.authors}")
    return events


def _set(t: TableState, phase: Phase, authors: Sequence[int]) -> None:
    t.phase = phase
    t.authors = tuple(authors)


def _next(t: TableState) -> list[Event]:
    everyone = tuple(range(t.n))
    if t.voiding is not None:
        return _voided(t)
    phase = t.phase
    hand = t.hand
    if phase is Phase.SEATS_COMMIT:
        _set(t, Phase.SEATS_REVEAL, everyone)
        return []
    if phase is Phase.SEATS_REVEAL:
        seed = t.seat_draw.seed()
        t.seating = tuple(permutation(seed, t.n, label=b"seats"))
        ps = [0] * t.n
        for s, p in enumerate(t.seating):
            ps[p] = s
        t.party_seat = tuple(ps)
        dealer = uniform_choice(seed, t.n, label=b"dealer")
        t.match = Match(t.rules, first_dealer=dealer)
        return [SeatsDrawn(t.seating, dealer), *_start_hand(t)]
    assert hand is not None
    if phase is Phase.HAND_KEYS:
        _set(t, Phase.SHUFFLE, (t.seating[0],))
        return []
    if phase is Phase.SHUFFLE:
        nxt = hand.deck.next_shuffler
        if nxt is not None:
            _set(t, Phase.SHUFFLE, (t.seating[nxt],))
            return []
        _set(t, Phase.DEAL, everyone)
        return []
    if phase is Phase.DEAL:
        return _dealt(t, hand)
    if phase in (Phase.TURN, Phase.REVEAL):
        return _after_move(t, hand)
    if phase is Phase.COUNT:
        assert hand.view is not None
        hand.result = score_hand(hand.view)
        _set(t, Phase.RESULT, everyone)
        return []
    if phase is Phase.RESULT:
        assert t.match is not None and hand.result is not None
        t.match.record(hand.result)
        t.hands_played += 1
        _set(t, Phase.OPEN, everyone)
        return [HandEnded(hand.result)]
    if phase is Phase.OPEN:
        if hand.opened is not None:
            t.opened.append(hand.opened)
        assert t.match is not None
        if t.match.over:
            _set(t, Phase.FINAL, everyone)
            return []
        if t.rules.minutes and not t.match.time_is_up:
            _set(t, Phase.TIME, everyone)
            return []
        return _start_hand(t)
    if phase is Phase.TIME:
        return _clocks_read(t)
    if phase is Phase.FINAL:
        assert t.match is not None
        _set(t, Phase.CLOSED, ())
        return [MatchEnded(tuple(t.match.scores), t.match.winner)]
    raise AssertionError(phase)  # pragma: no cover


def _voided(t: TableState) -> list[Event]:
    """A void round is complete: judge it where it stands (see the module docstring) and
    begin what follows it. `t.phase` is still the phase it interrupted."""
    action = t.voiding
    assert action is not None
    silent = t.silent
    t.voiding = None
    t.fault = None
    events: list[Event] = [Voided(action, silent)]
    phase, match, hand = t.phase, t.match, t.hand
    number = hand.number if hand is not None else None
    proven: tuple[int, ...] = ()
    charged: tuple[int, ...] = ()
    if match is None:
        stage, go_on = BEFORE_SEATS, False
    elif phase in _SCORED:
        stage, go_on = SCORED, action != "end"
        if phase is Phase.RESULT:
            assert hand is not None and hand.result is not None
            match.record(hand.result)
            t.hands_played += 1
            events.append(HandEnded(hand.result))
    elif phase in _IN_HAND:
        stage = IN_HAND
        proven = _proven(t, silent)
        if proven:
            sides = {match.side_of(s) for s in _partners(t, [t.party_seat[p] for p in proven])}
            charged = match.abandon(sides)
            assert number is not None
            events.append(Abandoned(number, proven, charged, match.abandon_cost))
        go_on = action == REPLACE or (action != "end" and proven == silent)
    else:
        stage, go_on = BEFORE_DEAL, action != "end"
    decided = match is not None and match.over
    then = "decided" if decided else "next_hand" if go_on else "closed"
    t.voids.append(VoidRecord(
        len(t.log) - 1, action, silent, phase.value, number, stage, proven, charged,
        match.abandon_cost if charged and match is not None else 0, then, t.void_try,
        t.void_held,
    ))  # fmt: skip
    t.void_try = 0
    t.void_held = ()
    if then != "next_hand":
        _set(t, Phase.CLOSED, ())
        if match is not None:
            events.append(MatchEnded(tuple(match.scores), match.winner))
        return events
    if action == REPLACE:
        _succeed(t)
    t.silent = ()
    t.void_keys = ()
    return events + _start_hand(t)


def _side(t: TableState, seat: int) -> int:
    """The side a seat is on now: the engine's once the hand is dealt (at three seats it
    changes when the first pot is taken), the deal's before."""
    view = t.view
    if view is not None:
        return view.seat_side[seat]
    assert t.match is not None
    return t.match.side_of(seat)


def _partners(t: TableState, seats: Sequence[int]) -> list[int]:
    """Every seat on the side of one of `seats` (themselves included)."""
    sides = {_side(t, s) for s in seats}
    return [s for s in range(t.n) if _side(t, s) in sides]


def _proven(t: TableState, silent: Sequence[int]) -> tuple[int, ...]:
    """The silent parties the log proves walked out: those with a partner (another party on
    the same side) among the void's signers. The signers' word proves nothing against an
    opponent; a partner's signature costs the partner's own side, so it is evidence."""
    signers = [p for p in range(t.n) if p not in silent]
    return tuple(
        p for p in silent
        if any(q != p and _side(t, t.party_seat[q]) == _side(t, t.party_seat[p])
               for q in signers)
    )  # fmt: skip


def time_is_up(rules_minutes: int, clocks: Sequence[int]) -> bool:
    """The round of clocks' verdict: the time is up when more than half of the parties'
    clocks (milliseconds since each saw the seats drawn) have reached the limit.

    No single fast clock (or lying party) ends a match early, and at three, four or six no
    one party's slow clock keeps it going; at two both clocks must agree."""
    limit = rules_minutes * 60_000
    return 2 * sum(1 for ms in clocks if ms >= limit) > len(clocks)


def _clocks_read(t: TableState) -> list[Event]:
    """The round of clocks after a hand is complete: the match ends there if the time is up
    (every replica calls `Match.time_up` at this same place in the log), or goes on."""
    assert t.match is not None and t.hand is not None
    clocks = tuple(int(e.body["ms"]) for e in t.log[-t.n :])
    if not time_is_up(t.rules.minutes, clocks):
        return _start_hand(t)
    t.match.time_up()
    events: list[Event] = [TimeUp(t.hand.number, clocks)]
    if t.match.over:
        _set(t, Phase.FINAL, tuple(range(t.n)))
        return events
    return events + _start_hand(t)


def _succeed(t: TableState) -> None:
    """The seats of the silent parties pass to the new identities the agreement names; an
    heir named among them becomes that party (the hand about to start is its first)."""
    index = len(t.log) - 1
    for party, raw in zip(t.silent, t.void_keys, strict=True):
        key = PeerKey(raw)
        t.keys[party] = key
        t.successions.append((index, party, key))
        if t.heir is not None and t.heir[0] == raw:
            t.me, t.rng = party, t.heir[1]
            t.heir = None


def _start_hand(t: TableState) -> list[Event]:
    assert t.match is not None
    number = 0 if t.hand is None else t.hand.number + 1
    rules = t.rules
    dealer = t.match.dealer
    # The engine's own play order for this deal, at any seat count.
    order = HandState(t.match.next_setup(), None, None).order
    layout = deal_layout(rules)
    rng = t.rng
    keypair = KeyPair.generate(rng) if rng is not None else None
    deck = DeckSession(
        table_id=t.terms.table_id,
        hand=number,
        players=[t.keys[p].raw for p in t.seating],
        me=t.my_seat,
        keypair=keypair,
        layout=layout,
        play_order=order,
        rng=rng,
        checks=t.checks,
    )
    cut = CommitReveal(CoinContext(t.terms.table_id, CUT, number), t.n)
    t.hand = Deal(
        number,
        dealer,
        layout.face_up,
        deck,
        cut,
        keypair,
        new_nonce(rng) if rng is not None else None,
    )
    _set(t, Phase.HAND_KEYS, tuple(range(t.n)))
    return []


def _dealt(t: TableState, hand: Deal) -> list[Event]:
    assert t.match is not None
    seed = hand.cut.seed()
    cut = uniform_int(seed, 1, t.rules.deck_size - 1, label=b"cut")
    setup = t.match.next_setup(cut=cut)
    seat = t.my_seat
    hand.view = PlayerView(setup, seat) if seat is not None else HandState(setup, None, None)
    events: list[Event] = [HandStarted(hand.number, hand.dealer, cut)]
    events += reveal_cards(t, hand, hand.early)
    hand.early = []
    return events + _to_turn(t, hand)


def _after_move(t: TableState, hand: Deal) -> list[Event]:
    view = hand.view
    assert view is not None
    if view.ended:
        _set(t, Phase.COUNT, tuple(range(t.n)))
        return []
    owing = [p for p in range(t.n) if hand.deck.owed_by(t.party_seat[p])]
    if owing and t.phase is Phase.TURN:
        _set(t, Phase.REVEAL, owing)
        return []
    return _to_turn(t, hand)


def _to_turn(t: TableState, hand: Deal) -> list[Event]:
    view = hand.view
    assert view is not None
    _set(t, Phase.TURN, (t.seating[view.turn],))
    if view.turn == t.my_seat:
        return [YourTurn(view.turn)]
    return []
