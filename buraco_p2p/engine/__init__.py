"""The Buraco game engine: one hand and a whole match, as pure deterministic state machines.

Hidden information is built in. The shuffled deck is a sequence of slots; the deal layout
(`deal_layout(rules)`) says where each slot lies. A view (`PlayerView` for a seat,
`RefereeView` knowing the whole permutation) learns a card's identity only through
`view.reveal(slot, card_id, public=...)`. Every view applies the same moves with `push(move)`,
which validates fully (an illegal move raises `IllegalMove` with an `IllegalMoveCode` and leaves
the state untouched) and returns the `RevealRequest`s the session owes: a drawn card or a taken
pot privately to its new owner, the end-of-hand count publicly. Moves that expose cards
(`LayDown`, `AddToMeld`, `Discard`, `TurnUpFirst`) need those slots revealed publicly first
(`view.exposed_by(move)` lists them); so does `TakeDiscard` under fechado, where it shows the
hand cards that justify taking the pile (its `justify` slots, see `buraco_p2p.engine.hand`).
Legality depends only on public information, so every view accepts or refuses a move alike,
and `state_hash()` (public state only) is equal on every view after the same log. How the
hand plays where the rule sources leave room is documented in `buraco_p2p.engine.hand`; what
`legal_moves` generates, in `buraco_p2p.engine.legal`.

Public API:

- state: `HandSetup`, `HandState` (alias `Hand`), `PlayerView`, `RefereeView`, `Phase`,
  `EndReason`, `TableMeld`, `team_of` (four players); sides for every player count (2, 3, 4,
  6): `view.sides`, `view.side_of(seat)`, `view.partners(seat)`, `view.side_change` (a
  `SideChange` at three players once the first pot is taken), `match_sides(rules)`,
  `sides_at_deal(rules)`, `pot_take_order(rules)`; `view.check(move)`, `view.is_legal(move)`,
  `view.copy()`, `view.sample_referee(rng)` (a referee consistent with what the view knows,
  for simulations), `view.preview_take(seat)` (the state after taking the pile, unchecked),
  `view.justification_problem(take)` (why a fechado take is not justified, or None);
  `view.exposed_by(move)` / `view.precheck(move)` (the slots a move shows, after every check
  that does not need its faces; `IllegalMove` otherwise); `view.opening` (the melds shown
  this turn by a team not yet open, under its minimum so far; `opening_slots()`,
  `opening_points()`);
  `view.emptying_outcome(seat, melds)` says what emptying a hand would do now: `TAKE_POT`,
  `GO_OUT`, `EMPTY` or -1 (not allowed); `view.meld_emptying_outcome(seat, melds)` the same
  for emptying it by a meld (-1 for going out where only a discard may close the hand)
- reveals: `Reveal` (+ `reveal_from_wire(obj, deck_size=108)`), `view.reveal()`/`view.apply()`,
  `RevealRequest`
- moves: `DrawStock`, `TakeDiscard`, `TurnUpFirst`, `LayDown`, `AddToMeld`, `Discard`, `Move`,
  `move_from_wire(obj, players=4, deck_size=108)` (pass the table's `rules.players` and
  `rules.deck_size` at other counts)
- errors: `IllegalMove`, `IllegalMoveCode`, `RevealError`
- `legal_moves(view)`, `deal_layout(rules)`, `DealLayout`,
  `play_order(dealer, clockwise, players=4)`
- scoring: `score_hand(view)`, `HandResult` (per side; `match_points` per match side),
  `ScoreLine`, `LINE_NAMES`, `cutter_seat(dealer, players=4)`
- match: `Match` (target score, or `hands=N` / `minutes=M` with `match.time_up()`)
- local play: `LocalTable` (referee + one player view per seat, fed like a session would),
  `referee_deal`, `random_permutation`

A single referee hand from a seed, played by the referee itself::

    import random
    from buraco_p2p.rules import get_preset
    from buraco_p2p.engine import HandSetup, legal_moves, referee_deal, score_hand

    rng = random.Random(42)
    hand = referee_deal(HandSetup(get_preset("italian"), dealer=0), rng)
    while not hand.ended:
        hand.push(rng.choice(legal_moves(hand)))
    print(score_hand(hand).totals)

A match, each player deciding from their own view::

    import random
    from buraco_p2p.rules import get_preset
    from buraco_p2p.engine import LocalTable, Match, legal_moves

    rng = random.Random(7)
    match = Match(get_preset("us"), first_dealer=0)
    while not match.over:
        table = LocalTable.shuffled(match.next_setup(cut=rng.randint(1, 103)), rng)
        while not table.ended:
            seat = table.referee.turn
            view = table.views[seat]           # what that player knows
            move = rng.choice(legal_moves(view))
            table.push(move)                   # reveals, then the move on every view
        match.record(table.result())
    print(match.scores, match.winner)

At another player count the rules say so (`players=2`, `3` or `6`, and `teams=2` at six); a
hand's result is per side, what it adds to the match per player at two and three::

    import random
    from buraco_p2p.rules import get_preset
    from buraco_p2p.engine import HandSetup, LocalTable, legal_moves

    rng = random.Random(3)
    rules = get_preset("italian").with_overrides({"players": 3})
    table = LocalTable.shuffled(HandSetup(rules, dealer=0), rng)
    while not table.ended:
        table.push(rng.choice(legal_moves(table.views[table.referee.turn])))
    print(table.referee.side_change, table.result().sides, table.result().match_points)

With a networked session instead of `LocalTable`, for each move: ask `view.exposed_by(move)`,
which checks the move as far as it can before its cards are seen (turn, phase, every slot
held by the mover) and raises `IllegalMove` otherwise, so that nothing is revealed for a
refused move; publicly reveal the slots it returns on every view, `push(move)`, then deliver
the returned requests
(`view.reveal(slot, card_id)` on the owner's view for a private one, on every view with
`public=True` for a public one). At the deal, deliver `view.deal_reveals()`; after the hand
ends, `view.end_reveals()`, then `score_hand(view)`.
"""

from buraco_p2p.engine.errors import IllegalMove, IllegalMoveCode, RevealError
from buraco_p2p.engine.hand import (
    EMPTY,
    GO_OUT,
    TAKE_POT,
    EndReason,
    HandSetup,
    HandState,
    Phase,
    PlayerView,
    RefereeView,
    Reveal,
    RevealRequest,
    SideChange,
    TableMeld,
    match_sides,
    reveal_from_wire,
    team_of,
)
from buraco_p2p.engine.layout import (
    DealLayout,
    deal_layout,
    play_order,
    pot_take_order,
    sides_at_deal,
)
from buraco_p2p.engine.legal import legal_moves
from buraco_p2p.engine.local import LocalTable, random_permutation, referee_deal
from buraco_p2p.engine.match import Match
from buraco_p2p.engine.moves import (
    AddToMeld,
    Discard,
    DrawStock,
    LayDown,
    Move,
    TakeDiscard,
    TurnUpFirst,
    move_from_wire,
)
from buraco_p2p.engine.scoring import LINE_NAMES, HandResult, ScoreLine, cutter_seat, score_hand

Hand = HandState

__all__ = [
    "EMPTY",
    "GO_OUT",
    "LINE_NAMES",
    "TAKE_POT",
    "AddToMeld",
    "DealLayout",
    "Discard",
    "DrawStock",
    "EndReason",
    "Hand",
    "HandResult",
    "HandSetup",
    "HandState",
    "IllegalMove",
    "IllegalMoveCode",
    "LayDown",
    "LocalTable",
    "Match",
    "Move",
    "Phase",
    "PlayerView",
    "RefereeView",
    "Reveal",
    "RevealError",
    "RevealRequest",
    "ScoreLine",
    "SideChange",
    "TableMeld",
    "TakeDiscard",
    "TurnUpFirst",
    "cutter_seat",
    "deal_layout",
    "legal_moves",
    "match_sides",
    "move_from_wire",
    "play_order",
    "pot_take_order",
    "random_permutation",
    "referee_deal",
    "reveal_from_wire",
    "score_hand",
    "sides_at_deal",
    "team_of",
]
