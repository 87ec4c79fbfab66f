"""Card faces, physical ids and the text notation."""

import pytest

from buraco_p2p.cards import (
    FACES,
    JOKER,
    Card,
    CardParseError,
    Suit,
    card_ids,
    face_of,
    format_cards,
    id_text,
    parse_card,
    parse_cards,
)


def test_every_face_prints_and_parses_back_to_itself() -> None:
    for face in FACES:
        assert parse_card(str(face)) is face


def test_faces_are_53_distinct_with_codes_0_to_52() -> None:
    assert [f.code for f in FACES] == list(range(53))
    assert len(set(FACES)) == 53
    assert JOKER.is_joker and JOKER.suit is None and str(JOKER) == "JK"


def test_ten_is_accepted_as_10_and_printed_as_T() -> None:
    assert parse_card("10D") == parse_card("TD") == Card(10, Suit.D)
    assert str(parse_card("10D")) == "TD"


def test_parse_is_case_insensitive_and_trims() -> None:
    assert parse_card(" as ") == Card(1, Suit.S)
    assert parse_card("jk") is JOKER
    assert parse_card("qh") == Card(12, Suit.H)


def test_parse_cards_accepts_spaces_commas_and_iterables() -> None:
    assert parse_cards("AS, 2S 3S") == [Card(1, Suit.S), Card(2, Suit.S), Card(3, Suit.S)]
    assert parse_cards(["KD", "JK"]) == [Card(13, Suit.D), JOKER]
    assert parse_cards("") == []
    assert format_cards(parse_cards("as 10c jk")) == "AS TC JK"


@pytest.mark.parametrize(
    "text", ["", "A", "1S", "11S", "AX", "ZS", "ASS", "J K", "JKS", "0S", "10", "S A", "♠A"]
)
def test_bad_card_text_is_a_card_parse_error_naming_the_text(text: str) -> None:
    with pytest.raises(CardParseError) as info:
        parse_card(text)
    assert repr(text) in str(info.value)
    assert isinstance(info.value, ValueError)


def test_non_text_card_is_a_card_parse_error() -> None:
    with pytest.raises(CardParseError, match="must be text"):
        parse_card(12)  # type: ignore[arg-type]


def test_parse_cards_reports_the_bad_card_among_good_ones() -> None:
    with pytest.raises(CardParseError, match="'XX'"):
        parse_cards("AS XX 3S")


def test_card_ids_two_copies_and_four_jokers() -> None:
    assert list(card_ids(104)) == list(range(104))
    assert len(card_ids(108)) == 108
    for card_id in range(52):
        assert face_of(card_id) is face_of(card_id + 52)
    assert all(face_of(i) is JOKER for i in range(104, 108))
    assert face_of(0) == Card(1, Suit.S)
    assert face_of(13) == Card(1, Suit.H)
    assert face_of(51) == Card(13, Suit.C)


@pytest.mark.parametrize("bad", [-1, 108, 1000])
def test_face_of_rejects_ids_outside_the_deck(bad: int) -> None:
    with pytest.raises(ValueError, match="out of range"):
        face_of(bad)


@pytest.mark.parametrize("size", [0, 52, 106, 110])
def test_card_ids_rejects_other_deck_sizes(size: int) -> None:
    with pytest.raises(ValueError, match="104, 108, 156 or 162"):
        card_ids(size)


def test_id_text_marks_second_copies() -> None:
    assert id_text(0) == "AS"
    assert id_text(52) == "AS#2"
    assert id_text(104) == "JK"
    assert id_text(107) == "JK#4"
    assert len({id_text(i) for i in range(108)}) == 108


@pytest.mark.parametrize("bad", [None, 12, 1.5, object()])
def test_parse_cards_of_a_non_text_is_a_card_parse_error(bad: object) -> None:
    with pytest.raises(CardParseError):
        parse_cards(bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("bad", [[None], ["AS", 3], [b"AS"]])
def test_parse_cards_of_a_list_with_a_non_text_is_a_card_parse_error(bad: list[object]) -> None:
    with pytest.raises(CardParseError, match="must be text"):
        parse_cards(bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("bad", [None, "3", 3.0, True])
def test_face_of_a_non_integer_is_a_value_error(bad: object) -> None:
    with pytest.raises(ValueError, match="out of range"):
        face_of(bad)  # type: ignore[arg-type]
