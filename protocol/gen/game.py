"""Deterministic test vectors for the game layer, written to protocol/vectors/game.json.

A second implementation of docs/protocol.md section 3 checks itself against this file: the
card ids and their text (in two- and three-pack decks), every preset's rules wire form,
canonical bytes and digest, the deal layouts, the play order for every dealer and direction,
each at four seats and at two, three and six, and move and reveal wire forms, accepted and
refused (by the four-seat table's bounds and by other tables' own).

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
from buraco_p2p.rules import PRESETS, RuleSet
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
    }


def generate() -> dict[str, Vector]:
    return {"game.json": game_vector()}


def main(argv: Sequence[str] | None = None) -> int:
    return vectorfiles.main(argv, generate=generate, prog="python -m protocol.gen.game")


if __name__ == "__main__":
    sys.exit(main())
