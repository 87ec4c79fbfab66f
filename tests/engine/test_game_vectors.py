"""protocol/vectors/game.json read back: every form decodes as the spec says, or is refused."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import msgpack
import pytest

from buraco_p2p.cards import parse_card
from buraco_p2p.engine import IllegalMove, deal_layout, move_from_wire, reveal_from_wire
from buraco_p2p.rules import PRESETS, RuleSet
from protocol.gen.files import VECTOR_DIR

GAME: dict[str, Any] = json.loads((VECTOR_DIR / "game.json").read_text(encoding="utf-8"))


def test_card_ids_follow_the_documented_order() -> None:
    ids = GAME["card_ids"]
    assert ids[0] == "AS" and ids[12] == "KS" and ids[13] == "AH" and ids[51] == "KC"
    assert ids[52] == "AS#2" and ids[103] == "KC#2"
    assert ids[104:] == ["JK", "JK#2", "JK#3", "JK#4"]
    faces = [t.split("#")[0] for t in ids]
    assert [str(parse_card(f)) for f in faces] == faces


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_preset_digest_is_sha256_of_the_sorted_pairs(name: str) -> None:
    entry = GAME["presets"][name]
    wire = entry["wire"]
    # Recomputed from the spec's recipe, not through RuleSet: msgpack of sorted [key, value].
    canonical = msgpack.packb([[k, wire[k]] for k in sorted(wire)], use_bin_type=True)
    assert canonical.hex() == entry["canonical_bytes"]
    assert hashlib.sha256(canonical).hexdigest() == entry["digest"]
    assert RuleSet.from_wire(wire) == PRESETS[name]


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_each_preset_deals_by_one_of_the_listed_layouts(name: str) -> None:
    lay = deal_layout(PRESETS[name])
    listed = {
        (v["deck_size"], v["face_up"] is not None): v for v in GAME["layouts"].values()
    }[(lay.deck_size, lay.face_up is not None)]
    assert [list(h) for h in lay.hands] == listed["hands_in_play_order"]
    assert [list(p) for p in lay.pots] == listed["pots"]
    assert lay.face_up == listed["face_up"]
    assert list(lay.stock) == listed["stock_in_draw_order"]


def test_layouts_place_every_slot_exactly_once() -> None:
    for v in GAME["layouts"].values():
        slots = [s for h in v["hands_in_play_order"] for s in h]
        slots += [s for p in v["pots"] for s in p] + v["stock_in_draw_order"]
        if v["face_up"] is not None:
            slots.append(v["face_up"])
        assert sorted(slots) == list(range(v["deck_size"]))


@pytest.mark.parametrize("case", GAME["moves"], ids=lambda c: c["name"])
def test_move_wire_forms_decode_and_encode_back(case: dict[str, Any]) -> None:
    move = move_from_wire(case["wire"])
    assert move.to_wire() == case["wire"]


@pytest.mark.parametrize("case", GAME["refused_moves"], ids=lambda c: c["name"])
def test_refused_move_wire_forms_give_their_code(case: dict[str, Any]) -> None:
    with pytest.raises(IllegalMove) as info:
        move_from_wire(case["wire"])
    assert info.value.code.value == case["code"]


@pytest.mark.parametrize("case", GAME["reveals"], ids=lambda c: c["name"])
def test_reveal_wire_forms_decode_and_encode_back(case: dict[str, Any]) -> None:
    assert reveal_from_wire(case["wire"]).to_wire() == case["wire"]
