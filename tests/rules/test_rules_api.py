"""The public API other layers rely on."""

import pytest

from buraco_p2p.rules import IllegalMeld, evaluate_meld, get_preset, parse_cards


def test_public_api_simple_run() -> None:
    meld = evaluate_meld(parse_cards("AS 2S 3S"), get_preset("us"))
    assert meld.kind == "run"
    assert meld.clean is True
    assert meld.card_points == 15 + 20 + 5
    assert meld.bonus == 0


def test_public_api_illegal_meld_is_value_error_with_code() -> None:
    with pytest.raises(ValueError) as info:
        evaluate_meld(parse_cards("AS 3S 5S"), get_preset("us"))
    assert isinstance(info.value, IllegalMeld)
    assert info.value.code == "not_consecutive"
    assert "4S" in str(info.value)
