"""`--rule KEY=VALUE` overrides, the wire form and the digest peers compare."""

import msgpack
import pytest
from hypothesis import given
from hypothesis import strategies as st

from buraco_p2p.rules import (
    HALF_TARGET,
    OVERRIDABLE,
    PRESETS,
    AceMode,
    GoingOut,
    RuleError,
    RuleOverrideError,
    RuleSet,
    get_preset,
    parse_override,
    parse_overrides,
)

US = get_preset("us")


def test_going_out_override_from_text() -> None:
    key, value = parse_override("going_out=any_buraco")
    assert (key, value) == ("going_out", GoingOut.ANY_BURACO)
    changed = US.with_overrides({key: value})
    assert changed.going_out is GoingOut.ANY_BURACO
    assert changed.changes_from(US) == {"going_out": (GoingOut.CLEAN_BURACO, GoingOut.ANY_BURACO)}
    assert US.going_out is GoingOut.CLEAN_BURACO  # presets are untouched


def test_target_score_override() -> None:
    assert parse_override("target_score=2000") == ("target_score", 2000)
    assert US.with_overrides(parse_overrides(["target_score=2000"])).target_score == 2000


@pytest.mark.parametrize(
    ("text", "key", "value"),
    [
        ("cut_22_bonus=0", "cut_22_bonus", 0),
        ("discard_wild_to_go_out=no", "discard_wild_to_go_out", False),
        ("must_meld_top_discard=TRUE", "must_meld_top_discard", True),
        ("set_ranks=A,J,Q,K", "set_ranks", frozenset({1, 11, 12, 13})),
        ("set_ranks=3 4 10", "set_ranks", frozenset({3, 4, 10})),
        ("set_ranks=none", "set_ranks", frozenset()),
        (
            "clean_run_length_bonus=13:500,14:1000",
            "clean_run_length_bonus",
            ((13, 500), (14, 1000)),
        ),
        ("clean_run_length_bonus=none", "clean_run_length_bonus", ()),
        ("vulnerable_from=half_target", "vulnerable_from", HALF_TARGET),
        ("vulnerable_from=1000", "vulnerable_from", 1000),
        ("ace=high_only", "ace", AceMode.HIGH_ONLY),
        ("wild-end = high", "wild_end", "high"),
    ],
)
def test_override_values_parse(text: str, key: str, value: object) -> None:
    assert parse_override(text) == (key, value)
    assert getattr(US.with_overrides({key: value}), key) == value


def test_unknown_key_names_it_and_suggests_the_closest() -> None:
    with pytest.raises(RuleOverrideError) as info:
        parse_override("going_ot=any_buraco")
    assert info.value.key == "going_ot"
    assert "'going_ot'" in str(info.value) and "'going_out'" in str(info.value)
    with pytest.raises(RuleOverrideError, match="'zzz'"):
        US.with_overrides({"zzz": 1})


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("going_out=sometimes", "going_out"),
        ("target_score=lots", "target_score"),
        ("target_score=0", "target_score"),
        ("deck_size=52", "deck_size"),
        ("cut_22_bonus=-5", "cut_22_bonus"),
        ("discard_wild_to_go_out=maybe", "discard_wild_to_go_out"),
        ("set_ranks=2", "set_ranks"),
        ("set_ranks=X", "set_ranks"),
        ("clean_run_length_bonus=13", "clean_run_length_bonus"),
        ("clean_run_length_bonus=3:100", "clean_run_length_bonus"),
        ("max_wilds=2", "max_wilds"),
        ("players=5", "players"),
        ("vulnerable_from=quarter", "vulnerable_from"),
    ],
)
def test_bad_override_value_names_key_and_value(text: str, key: str) -> None:
    with pytest.raises(RuleOverrideError) as info:
        US.with_overrides(parse_overrides([text]))
    assert info.value.key == key
    assert key in str(info.value)


def test_override_without_equals_sign() -> None:
    with pytest.raises(RuleOverrideError, match="KEY=VALUE"):
        parse_override("going_out")


def test_override_given_twice() -> None:
    with pytest.raises(RuleOverrideError, match="twice"):
        parse_overrides(["target_score=1", "target_score=2"])


def test_name_is_not_an_override() -> None:
    assert "name" not in OVERRIDABLE
    with pytest.raises(RuleOverrideError):
        parse_override("name=mine")
    with pytest.raises(RuleOverrideError):
        US.with_overrides({"name": "mine"})


def test_typed_override_values_are_checked() -> None:
    with pytest.raises(RuleOverrideError):
        US.with_overrides({"target_score": True})
    with pytest.raises(RuleOverrideError):
        US.with_overrides({"discard_wild_to_go_out": 1})
    with pytest.raises(RuleOverrideError):
        US.with_overrides({"going_out": 3})


@pytest.mark.parametrize("name", list(PRESETS))
def test_wire_round_trip(name: str) -> None:
    rules = get_preset(name)
    wire = rules.to_wire()
    packed = msgpack.packb(wire, use_bin_type=True)
    back = RuleSet.from_wire(msgpack.unpackb(packed, raw=False))
    assert back == rules and back.digest() == rules.digest()
    assert back.face_points == rules.face_points


def test_wire_values_are_plain() -> None:
    def plain(value: object) -> bool:
        if isinstance(value, list):
            return all(plain(v) for v in value)
        return type(value) in (str, int, bool)

    assert all(plain(v) for v in US.to_wire().values())


def test_digests_differ_between_presets_and_after_an_override() -> None:
    digests = {r.digest() for r in PRESETS.values()}
    assert len(digests) == len(PRESETS)
    assert US.with_overrides({"target_score": 2999}).digest() != US.digest()
    assert all(len(d) == 32 for d in digests)


def test_canonical_encoding_is_sorted_pairs_whatever_the_key_order() -> None:
    import hashlib

    pairs = msgpack.unpackb(US.canonical_bytes(), raw=False)
    keys = [k for k, _ in pairs]
    assert keys == sorted(keys) and len(keys) == len(US.to_wire())
    shuffled = dict(reversed(list(US.to_wire().items())))
    assert RuleSet.from_wire(shuffled).canonical_bytes() == US.canonical_bytes()
    assert US.digest() == hashlib.sha256(US.canonical_bytes()).digest()


@pytest.mark.parametrize(
    "bad",
    [
        None,
        [],
        {},
        {"v": 2},
        {**US.to_wire(), "v": 99},
        {**US.to_wire(), "extra": 1},
        {k: v for k, v in US.to_wire().items() if k != "target_score"},
        {**US.to_wire(), "target_score": "3000"},
        {**US.to_wire(), "going_out": "nope"},
        {**US.to_wire(), "set_ranks": [2]},
        {**US.to_wire(), "set_ranks": "AJQK"},
        {**US.to_wire(), "clean_run_length_bonus": [[13]]},
        {**US.to_wire(), "clean_run_length_bonus": [[13, "x"]]},
        {**US.to_wire(), "discard_wild_to_go_out": 0},
        {**US.to_wire(), "deck_size": 1 << 70},
        {**US.to_wire(), "name": ""},
        {**US.to_wire(), "name": 5},
        {**US.to_wire(), "name": "us\x1b[2J"},
        {**US.to_wire(), "v": True},
    ],
)
def test_bad_wire_form_is_a_rule_error(bad: object) -> None:
    with pytest.raises(RuleError):
        RuleSet.from_wire(bad)


override_values = st.fixed_dictionaries(
    {},
    optional={
        "target_score": st.integers(1, 10_000),
        "going_out": st.sampled_from(list(GoingOut)),
        "ace": st.sampled_from(list(AceMode)),
        "set_ranks": st.frozensets(st.sampled_from([1, *range(3, 14)])),
        "clean_run_length_bonus": st.sampled_from([(), ((13, 500),), ((13, 500), (14, 1000))]),
        "vulnerable_from": st.one_of(st.just(HALF_TARGET), st.integers(0, 5000)),
        "must_meld_top_discard": st.booleans(),
        "cut_22_bonus": st.integers(0, 500),
    },
)


@given(base=st.sampled_from(list(PRESETS.values())), changes=override_values)
def test_any_overridden_rule_set_survives_the_wire(
    base: RuleSet, changes: dict[str, object]
) -> None:
    rules = base.with_overrides(changes)
    back = RuleSet.from_wire(msgpack.unpackb(msgpack.packb(rules.to_wire()), raw=False))
    assert back == rules and back.digest() == rules.digest()
    assert set(rules.changes_from(base)) == {k for k, v in changes.items() if getattr(base, k) != v}
    assert (back.digest() == base.digest()) == (not rules.changes_from(base))


def test_go_out_by_discard_only_override_wire_and_digest() -> None:
    rules = US.with_overrides({"go_out_by_discard_only": "yes"})
    assert rules.go_out_by_discard_only is True and US.go_out_by_discard_only is False
    assert rules.digest() != US.digest()
    assert rules.changes_from(US) == {"go_out_by_discard_only": (False, True)}
    wire = rules.to_wire()
    assert wire["go_out_by_discard_only"] is True
    assert RuleSet.from_wire(wire) == rules
    assert parse_override("go-out-by-discard-only=false") == ("go_out_by_discard_only", False)
    with pytest.raises(RuleOverrideError):
        US.with_overrides({"go_out_by_discard_only": 1})
    with pytest.raises(RuleError):
        RuleSet.from_wire({**wire, "go_out_by_discard_only": "maybe"})
    old = dict(US.to_wire())
    del old["go_out_by_discard_only"]
    with pytest.raises(RuleError):
        RuleSet.from_wire(old)
