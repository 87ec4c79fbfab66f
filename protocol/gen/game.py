"""Deterministic test vectors for the game layer, written to protocol/vectors/game.json.

A second implementation of docs/protocol.md section 3 checks itself against this file: the
card ids and their text (in two- and three-pack decks), every preset's rules wire form,
canonical bytes and digest, the deal layouts, the play order for every dealer and direction,
each at four seats and at two, three and six, and move and reveal wire forms, accepted and
refused (by the four-seat table's bounds and by other tables' own); and examples of the rules
and the engine that the prose alone left open (a wild moving on an extension, an unplayed pot
under each rule, the cut in every preset's state, the card a lay-down shows).

    python -m protocol.gen.game           # check the file, exit 1 on any difference
    python -m protocol.gen.game --write   # rewrite it
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Final

from buraco_p2p.cards import id_text
from buraco_p2p.engine.errors import IllegalMove
from buraco_p2p.engine.layout import deal_layout, make_layout, play_order
from buraco_p2p.engine.local import LocalTable
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
from buraco_p2p.engine.reveals import Reveal
from buraco_p2p.engine.values import HandSetup
from buraco_p2p.rules import (
    PRESETS,
    IllegalMeld,
    Meld,
    RuleSet,
    evaluate_meld,
    extend_meld,
    parse_cards,
)
from buraco_p2p.rules.scoring import score_team_hand
from protocol.gen import files as vectorfiles

__all__ = ["FILES", "card_text", "generate", "main"]

FILES: Final = ("game.json",)

Vector = vectorfiles.Vector

_MOVES: Final[tuple[tuple[str, Move], ...]] = (
    ("draw from the stock", DrawStock(2)),
    ("take the discard pile", TakeDiscard(1)),
    ("take the pile under fechado, showing two hand slots", TakeDiscard(3, (12, 40))),
    ("turn up the first card", TurnUpFirst(0)),
    ("lay down one meld", LayDown(0, ((4, 8, 12),))),
    ("lay down two melds, the second's wild at the low end",
     LayDown(1, ((1, 5, 9), (13, 17, 21, 25)), (0, 1))),
    ("add two cards to meld 0", AddToMeld(2, 0, (30, 34))),
    ("add a wild to meld 1 at the high end", AddToMeld(3, 1, (7,), 2)),
    ("discard", Discard(1, 70)),
)  # fmt: skip

_REFUSED: Final[tuple[tuple[str, object], ...]] = (
    ("not a list", {"kind": 0}),
    ("too short", [0]),
    ("unknown kind", [6, 0]),
    ("seat out of range", [0, 4]),
    ("bool instead of int", [0, True]),
    ("draw with an argument", [0, 1, 5]),
    ("discard without a slot", [5, 1]),
    ("slot out of range", [5, 1, 108]),
    ("addition without slots", [4, 0, 0, 0]),
    ("wild end out of range", [4, 0, 0, 3, 5]),
    ("lay-down shorter than its meld count", [3, 0, 2, 3, 0, 1, 2, 3]),
    ("lay-down meld of two cards", [3, 0, 1, 2, 0, 1, 2]),
    ("lay-down with trailing items", [3, 0, 1, 3, 0, 1, 2, 3, 9]),
    ("a slot twice", [3, 0, 1, 3, 0, 1, 1, 2]),
    ("justifying slot twice", [1, 3, 12, 12]),
)


def card_text(card_id: int, deck_size: int) -> str:
    """Section 3.1's text of a card id in a deck of `deck_size`, computed from the spec's rule
    (k = 2 packs below 156 cards, else 3; ids below 52k are suited, the rest jokers)."""
    packs = 2 if deck_size < 156 else 3
    if not 0 <= card_id < deck_size or deck_size not in (104, 108, 156, 162):
        raise ValueError(f"no card {card_id} in a deck of {deck_size}")
    if card_id >= 52 * packs:
        copy = card_id - 52 * packs + 1
        return "JK" if copy == 1 else f"JK#{copy}"
    suit, rank = divmod(card_id % 52, 13)
    face = "A23456789TJQK"[rank] + "SHDC"[suit]
    copy = card_id // 52 + 1
    return face if copy == 1 else f"{face}#{copy}"


def _refusal(
    name: str, wire: object, *, players: int = 4, deck_size: int = 108
) -> dict[str, object]:
    try:
        move_from_wire(wire, players=players, deck_size=deck_size)
    except IllegalMove as e:
        return {"name": name, "wire": wire, "code": e.code.value}
    raise AssertionError(f"refused vector {name!r} was accepted")


_OTHER_COUNTS: Final = (2, 3, 6)

_REFUSED_AT: Final[tuple[tuple[str, int, int, object], ...]] = (
    ("seat 2 at a table of two", 2, 104, [0, 2]),
    ("seat 3 at a table of three", 3, 108, [5, 3, 0]),
    ("slot 162 in a 162-card deck", 6, 162, [5, 5, 162]),
    ("slot 108 in a 108-card deck at three", 3, 108, [5, 1, 108]),
)


def _layout_json(rules: RuleSet) -> dict[str, object]:
    lay = deal_layout(rules)
    return {
        "players": rules.players,
        "deck_size": lay.deck_size,
        "hands_in_play_order": [list(h) for h in lay.hands],
        "pots": [list(p) for p in lay.pots],
        "face_up": lay.face_up,
        "stock_in_draw_order": list(lay.stock),
    }


def _other_counts() -> dict[str, object]:
    """Rules, layouts and play orders at two, three and six seats."""
    presets: dict[str, object] = {}
    layouts: dict[str, object] = {}
    for name, base in PRESETS.items():
        for n in _OTHER_COUNTS:
            rules = base.with_overrides({"players": n})
            presets[f"{name}/{n}"] = {
                "wire": rules.to_wire(),
                "canonical_bytes": rules.canonical_bytes().hex(),
                "digest": rules.digest().hex(),
            }
            face_up = deal_layout(rules).face_up is not None
            layouts.setdefault(
                f"{n}p_{rules.deck_size}{'_face_up' if face_up else ''}", _layout_json(rules)
            )
    return {
        "presets_by_players": presets,
        "layouts_by_players": layouts,
        "play_order_by_players": {
            str(n): {
                direction: [
                    list(play_order(dealer, direction == "clockwise", n)) for dealer in range(n)
                ]
                for direction in ("clockwise", "counter_clockwise")
            }
            for n in _OTHER_COUNTS
        },
        "refused_moves_by_table": [
            {**_refusal(name, wire, players=n, deck_size=d), "players": n, "deck_size": d}
            for name, n, d, wire in _REFUSED_AT
        ],
    }


def game_vector() -> Vector:
    for size in (104, 108, 156, 162):
        if any(card_text(i, size) != id_text(i, size) for i in range(size)):
            raise AssertionError("section 3.1's card text and buraco_p2p.cards disagree")
    layouts = {}
    for deck_size, face_up in ((104, False), (108, False), (108, True)):
        lay = make_layout(deck_size, face_up)
        layouts[f"{deck_size}{'_face_up' if face_up else ''}"] = {
            "deck_size": deck_size,
            "hands_in_play_order": [list(h) for h in lay.hands],
            "pots": [list(p) for p in lay.pots],
            "face_up": lay.face_up,
            "stock_in_draw_order": list(lay.stock),
        }
    return {
        "description": "game-layer wire forms: card ids, rules, deal layout, moves (section 3)",
        "card_ids": [id_text(i) for i in range(108)],
        "card_ids_162": [card_text(i, 162) for i in range(162)],
        "presets": {
            name: {
                "wire": rules.to_wire(),
                "canonical_bytes": rules.canonical_bytes().hex(),
                "digest": rules.digest().hex(),
            }
            for name, rules in PRESETS.items()
        },
        "layouts": layouts,
        "play_order": {
            direction: [list(play_order(dealer, direction == "clockwise")) for dealer in range(4)]
            for direction in ("clockwise", "counter_clockwise")
        },
        "moves": [{"name": name, "wire": move.to_wire()} for name, move in _MOVES],
        "refused_moves": [_refusal(name, wire) for name, wire in _REFUSED],
        "reveals": [
            {
                "name": f"{'public' if r.public else 'private'} reveal of slot {r.slot} as "
                + card_text(r.card_id, 108),
                "wire": r.to_wire(),
            }
            for r in (Reveal(3, 71, False), Reveal(70, 105, True))
        ],
        **_other_counts(),
        **_examples(),
    }


def _examples() -> dict[str, object]:
    return {
        "examples_description": "rules and engine examples. `meld_extensions` (docs/rules.md, "
        "'Adding to a meld'): a meld as laid out (its wild at the end it took by default), "
        "cards added to it, the end asked for its wild (`wild_end`: null for the default, "
        "`low` or `high`; `end`: the same as the code of an `AddToMeld` move, 3.4), and the "
        "extended meld or the `IllegalMeld` code; faces in laid-out order, `start` the run "
        "position of the first face, `wild_index` -1 for none. `scoring` (docs/rules.md, "
        "'Penalties'): a side that took its pot, with its melds, the other cards left in its "
        "hands and the unplayed pot's cards (null: the pot was played), and its seven score "
        "lines. `setups` (4.9, element 2): the setup of a hand with dealer 1, match scores "
        "120 and -35, a cut of 37 and hand number 2 in every preset, whether or not it rewards "
        "the cut. `shown_slots` (3.4): italian at two seats, dealer 0 (seat 1 plays first); "
        "the deck is the identity order but for seat 1's eleven dealt slots (0, 2, .., 20: "
        "3H..9H, 3S..6S) and the first stock slot 45 (7S); after its draw seat 1 lays down "
        "3H..9H and 3S..6S, leaving 7S: the slots that lay-down shows with and without "
        "`discard_wild_to_go_out` (`cards`: the face of each slot of seat 1's hand). "
        "`lone_wild` (3.4, docs/rules.md 'A meld that leaves one card'): the same deck but "
        "for the first pot, slots 22..32 (`pot_cards`); seat 1 draws, lays down its twelve "
        "cards (a buraco, 3H..9H) and so takes that pot in flight, then lays down ten of the "
        "pot's cards, leaving the joker: with `discard_wild_to_go_out` false that lay-down shows "
        "the joker's slot and is refused (`last`: the code), with it true it shows only the "
        "melded slots and is accepted. `no_pots` (docs/rules.md, 'No pots'): italian at two "
        "seats with `pots` 0, dealer 0: the deal's layout (no pot: the face-up card follows "
        "the hands, then the stock), the deck in identity order but for the slots in `cards`; "
        "seat 1 draws 6S, lays down 3H..9H (a buraco) and 3S..6S and discards KD: it goes out "
        "with no pot to take and the hand ends there; `lines` are each side's score lines "
        "(`pot_not_taken` and `pot_unplayed` score nothing), `pots_state` and `side_change` "
        "the public state's elements 9 and 20 (4.9).",
        "meld_extensions": _extensions(),
        "scoring": _scoring(),
        "setups": _setups(),
        "shown_slots": _shown_slots(),
        "lone_wild": _lone_wild(),
        "no_pots": _no_pots(),
    }


def generate() -> dict[str, Vector]:
    return {"game.json": game_vector()}


def main(argv: Sequence[str] | None = None) -> int:
    return vectorfiles.main(argv, generate=generate, prog="python -m protocol.gen.game")


if __name__ == "__main__":
    sys.exit(main())


# --- rules and engine examples (docs/rules.md, docs/protocol.md 3.4 and 4.9) -----------------

# (name, preset, the meld's cards, the cards added, the end asked for: None for the default)
_EXTENSIONS: Final[tuple[tuple[str, str, str, str, str | None], ...]] = (
    ("an added card opens a gap: the wild moves into it", "classic", "8C 9C TC 2S",
     "6C", None),
    ("an added card beyond the wild's end: the wild stays at the high end", "classic",
     "8C 9C TC 2S", "JC", None),
    ("two cards added beyond the wild", "classic", "8C 9C TC 2S", "JC QC", None),
    ("a natural takes the wild's place in the gap: the wild goes to the high end", "classic",
     "8C 9C JC 2S", "TC", None),
    ("a wild deuce of the run's suit settles at its own place", "classic", "2S 4S 5S 6S",
     "3S", None),
    ("two gaps for one wild", "classic", "8C 9C TC 2S", "5C", None),
    ("a second wild", "classic", "8C 9C TC 2S", "JK", None),
    ("a natural takes the wild's place, the low end asked: the wild goes to the low end",
     "classic", "8C 9C JC 2S", "TC", "low"),
    ("a natural takes the wild's place, the low end asked where the wild takes the high end",
     "italian", "8C 9C JC 2S", "TC", "low"),
    ("an end asked while the wild fills the gap the added card leaves", "classic",
     "8C 9C JC 2S", "QC", "low"),
)  # fmt: skip


def _meld_json(meld: Meld) -> dict[str, object]:
    return {
        "text": str(meld),
        "faces": [str(c) for c in meld.faces],
        "start": meld.start,
        "wild_index": -1 if meld.wild_index is None else meld.wild_index,
        "clean": meld.clean,
    }


def _extensions() -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    for name, preset, cards, added, end in _EXTENSIONS:
        rules = PRESETS[preset]
        meld = evaluate_meld(parse_cards(cards), rules)
        case: dict[str, object] = {
            "name": name,
            "preset": preset,
            "meld": _meld_json(meld),
            "added": added.split(),
            "wild_end": end,
            "end": {None: 0, "low": 1, "high": 2}[end],
        }
        try:
            grown = extend_meld(meld, parse_cards(added), rules, wild_end=end)
            case["result"] = _meld_json(grown)
        except IllegalMeld as exc:
            case["refused"] = exc.code
        out.append(case)
    return out


# (name, preset, melds, cards left in the side's hands, the unplayed pot's cards or None)
_SCORES: Final[tuple[tuple[str, str, tuple[str, ...], str, str | None], ...]] = (
    ("pot_unplayed=penalty: the pot's cards count for nothing", "classic",
     ("3H 4H 5H 6H 7H 8H 9H",), "KD QD", "AS 2C 5D 6D 7D 8D 9D TD JD QC KC"),
    ("pot_unplayed=count: the pot's cards count as cards in hand", "italian",
     ("3H 4H 5H 6H 7H 8H 9H",), "KD QD", "AS 2C 5D 6D 7D 8D 9D TD JD QC KC"),
    ("pot_unplayed=penalty_and_count: both", "fechado",
     ("3H 4H 5H 6H 7H 8H 9H",), "KD QD", "AS 2C 5D 6D 7D 8D 9D TD JD QC KC"),
    ("a pot played: no line of its own", "classic", ("3H 4H 5H 6H 7H 8H 9H",), "KD QD", None),
)  # fmt: skip


def _scoring() -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    for name, preset, melds, hand, pot in _SCORES:
        rules = PRESETS[preset]
        laid = [evaluate_meld(parse_cards(m), rules) for m in melds]
        lines = score_team_hand(
            rules,
            melds=laid,
            cards_in_hands=parse_cards(hand),
            took_pot=True,
            went_out=False,
            unplayed_pot=None if pot is None else parse_cards(pot),
        )
        out.append({
            "name": name,
            "preset": preset,
            "pot_unplayed": rules.pot_unplayed.value,
            "melds": [str(m) for m in laid],
            "cards_in_hands": hand.split(),
            "unplayed_pot": None if pot is None else pot.split(),
            "lines": [[x.name, x.points] for x in lines],
        })  # fmt: skip
    return out


def _setups() -> list[dict[str, object]]:
    """Element 2 of 4.9 at the start of a hand, for every preset: the cut is recorded whether
    or not the preset rewards it."""
    out: list[dict[str, object]] = []
    for name, rules in sorted(PRESETS.items()):
        setup = HandSetup(rules, 1, (120, -35), 37, 2)
        table = LocalTable(setup, list(range(rules.deck_size)))
        out.append({
            "preset": name,
            "cut_22_bonus": rules.cut_22_bonus,
            "setup": table.views[0].public_state()[2],
        })  # fmt: skip
    return out


def _shown_slots() -> list[dict[str, object]]:
    """A lay-down leaving one card, with and without `discard_wild_to_go_out`: italian at two
    seats, dealer 0, so seat 1 plays first and holds the even slots 0..20, and draws slot 45
    (after the pots 22..32 and 33..43 and the face-up card 44)."""
    first = [15, 16, 17, 18, 19, 20, 21, 2, 3, 4, 5]  # 3H..9H, 3S..6S
    drawn = 6  # 7S
    out: list[dict[str, object]] = []
    for wild_out in (False, True):
        rules = PRESETS["italian"].with_overrides(
            {"players": 2, "discard_wild_to_go_out": wild_out}
        )
        rest = [c for c in range(rules.deck_size) if c not in (*first, drawn)]
        perm: list[int] = []
        for slot in range(rules.deck_size):
            if slot < 22 and slot % 2 == 0:
                perm.append(first[slot // 2])
            elif slot == 45:
                perm.append(drawn)
            else:
                perm.append(rest.pop(0))
        table = LocalTable(HandSetup(rules, 0, (0, 0), 37, 0), perm)
        view = table.views[1]
        draw = DrawStock(1)
        table.push(draw)
        hand = view.hand(1)
        by_card = {perm[s]: s for s in hand}
        runs = ([by_card[c] for c in first[:7]], [by_card[c] for c in first[7:]])
        lay = LayDown(1, (tuple(runs[0]), tuple(runs[1])))
        out.append({
            "discard_wild_to_go_out": wild_out,
            "hand_after_draw": list(hand),
            "cards": {str(s): id_text(perm[s]) for s in hand},
            "moves": [draw.to_wire(), lay.to_wire()],
            "shown_by_the_lay_down": list(table.referee.exposed_by(lay)),
        })  # fmt: skip
    return out


def _lone_wild() -> list[dict[str, object]]:
    """A meld that would leave a lone wild once the side may go out: italian at two seats,
    dealer 0. Seat 1 holds 3H..9H and 3S..6S, draws 7S, lays all twelve down (a buraco) and so
    empties its hand and takes the first pot in flight (slots 22..32: 3D..9D, 3C 4C 5C and a
    joker); then it lays down 3D..9D and 3C 4C 5C, which would leave the joker alone."""
    first = [15, 16, 17, 18, 19, 20, 21, 2, 3, 4, 5]  # 3H..9H, 3S..6S
    drawn = 6  # 7S
    pot = [28, 29, 30, 31, 32, 33, 34, 41, 42, 43, 104]  # 3D..9D, 3C 4C 5C, the first joker
    out: list[dict[str, object]] = []
    for wild_out in (False, True):
        rules = PRESETS["italian"].with_overrides(
            {"players": 2, "discard_wild_to_go_out": wild_out}
        )
        fixed = {**{2 * i: c for i, c in enumerate(first)}, 45: drawn}
        fixed |= {22 + i: c for i, c in enumerate(pot)}
        rest = iter(c for c in range(rules.deck_size) if c not in fixed.values())
        perm = [fixed[s] if s in fixed else next(rest) for s in range(rules.deck_size)]
        table = LocalTable(HandSetup(rules, 0, (0, 0), 37, 0), perm)
        moves: list[Move] = [
            DrawStock(1),
            LayDown(1, (tuple(range(0, 14, 2)), (14, 16, 18, 20, 45))),
            LayDown(1, (tuple(range(22, 29)), (29, 30, 31))),
        ]
        for move in moves[:2]:
            table.push(move)
        last = moves[2]
        case: dict[str, object] = {
            "discard_wild_to_go_out": wild_out,
            "pot_slots": list(range(22, 33)),
            "pot_cards": [id_text(c) for c in pot],
            "moves": [m.to_wire() for m in moves],
            "shown_by_the_last": list(table.referee.exposed_by(last)),
        }
        try:
            table.push(last)
            case["last"] = "accepted"
        except IllegalMove as exc:
            case["last"] = exc.code.value
        out.append(case)
    return out


def _no_pots() -> dict[str, object]:
    """Going out with no pot (`pots=0`): italian at two seats, dealer 0, so seat 1 plays first
    and holds the even slots 0..20; the face-up card is slot 22 and the stock starts at 23."""
    rules = PRESETS["italian"].with_overrides({"players": 2, "pots": 0})
    first = [15, 16, 17, 18, 19, 20, 21, 2, 3, 4, 38]  # 3H..9H, 3S 4S 5S, KD
    fixed = {**{2 * i: c for i, c in enumerate(first)}, 23: 5}  # 6S, the first stock card
    rest = iter(c for c in range(rules.deck_size) if c not in fixed.values())
    perm = [fixed[s] if s in fixed else next(rest) for s in range(rules.deck_size)]
    table = LocalTable(HandSetup(rules, 0, (0, 0), 37, 0), perm)
    moves: list[Move] = [
        DrawStock(1),
        LayDown(1, (tuple(range(0, 14, 2)), (14, 16, 18, 23))),
        Discard(1, 20),
    ]
    for move in moves:
        table.push(move)
    result = table.result()
    state = table.views[0].public_state()
    return {
        "preset": "italian",
        "players": 2,
        "pots": rules.pots,
        "dealer": 0,
        "layout": _layout_json(rules),
        "cards": {str(s): id_text(c) for s, c in sorted(fixed.items())},
        "moves": [m.to_wire() for m in moves],
        "ended": table.ended,
        "end_reason": result.end_reason.value,
        "went_out": result.went_out,
        "lines": [[[x.name, x.points] for x in side] for side in result.lines],
        "pots_state": state[9],
        "side_change": state[20],
    }
