"""The log entry: canonical encoding, hash, signature, genesis terms."""

from __future__ import annotations

import pytest
from session_helpers import TABLE_ID, genesis, identities

from buraco_p2p import codec
from buraco_p2p.rules import get_preset
from buraco_p2p.session import (
    BadSignature,
    MalformedEntry,
    WrongTable,
    decode_entry,
    make_entry,
    make_genesis,
    parse_genesis,
    step_head,
)
from buraco_p2p.session.entry import HASH_DOMAIN, SIGN_DOMAIN


def _entry(**over: object) -> bytes:
    ids = identities()
    args: dict[str, object] = dict(
        table=TABLE_ID, index=3, prev=b"\x01" * 32, author=1, kind="commit", body={"c": b"x" * 32}
    )
    args.update(over)
    return make_entry(ids[1], **args).wire  # type: ignore[arg-type]


def test_round_trip_and_hash_is_over_the_canonical_bytes() -> None:
    import hashlib

    wire = _entry()
    e = decode_entry(wire)
    assert e.wire == wire
    assert e.hash == hashlib.sha256(HASH_DOMAIN + wire).digest()
    assert e.index == 3 and e.author == 1 and e.kind == "commit"
    e.verify(tuple(i.public for i in identities()))
    unsigned = codec.unpack(wire)
    del unsigned["s"]
    assert e.signing_bytes() == SIGN_DOMAIN + codec.pack(unsigned)


def test_signature_by_another_key_is_refused() -> None:
    e = decode_entry(_entry())
    keys = tuple(i.public for i in identities())
    swapped = (keys[0], keys[2], keys[1], keys[3])
    with pytest.raises(BadSignature) as info:
        e.verify(swapped)
    assert info.value.author == 1 and info.value.evidence == (e.wire,)


def test_any_changed_field_breaks_the_signature() -> None:
    keys = tuple(i.public for i in identities())
    wire = _entry()
    obj = codec.unpack(wire)
    for key, value in [("i", 4), ("p", b"\x02" * 32), ("a", 2), ("k", "reveal"), ("b", {})]:
        forged = dict(obj)
        forged[key] = value
        e = decode_entry(codec.pack(forged))
        with pytest.raises(BadSignature):
            e.verify(keys)


@pytest.mark.parametrize(
    "mutate",
    [
        lambda o: o.pop("s"),
        lambda o: o.update(x=1),
        lambda o: o.update(i=-1),
        lambda o: o.update(i=True),
        lambda o: o.update(a=9),
        lambda o: o.update(t=b"short"),
        lambda o: o.update(p=b"\x00" * 31),
        lambda o: o.update(k=""),
        lambda o: o.update(b=[1]),
        lambda o: o.update(s=b"\x00" * 63),
        lambda o: o.update(s=[b"\x00" * 63]),
    ],
)
def test_malformed_entries_are_typed_errors(mutate: object) -> None:
    obj = codec.unpack(_entry())
    mutate(obj)  # type: ignore[operator]
    with pytest.raises(MalformedEntry):
        decode_entry(codec.pack(obj))


def test_non_canonical_or_garbage_bytes_are_refused() -> None:
    wire = _entry()
    for data in [b"", b"\xc1", wire + b"\x00", wire[:-1]]:
        with pytest.raises(MalformedEntry):
            decode_entry(data)
    import msgpack

    obj = codec.unpack(wire)
    reordered = msgpack.packb(dict(reversed(list(obj.items()))), use_bin_type=True)
    assert reordered != wire
    with pytest.raises(MalformedEntry):
        decode_entry(reordered)


def test_step_head_commits_to_order_and_content() -> None:
    a, b = b"\x01" * 32, b"\x02" * 32
    assert step_head([a, b]) != step_head([b, a])
    assert step_head([a]) != step_head([a, a])
    assert len(step_head([])) == 32


def test_genesis_is_signed_by_every_party_and_checked() -> None:
    g = genesis()
    terms = parse_genesis(g)
    assert terms.parties == 4 and terms.rules == get_preset("us")
    assert terms.keys == tuple(i.public for i in identities())
    again = decode_entry(g.wire)
    assert parse_genesis(again) == terms
    # one party's signature replaced by another's: refused naming that party
    obj = codec.unpack(g.wire)
    obj["s"][2] = obj["s"][1]
    with pytest.raises(BadSignature) as info:
        parse_genesis(decode_entry(codec.pack(obj)))
    assert info.value.author == 2


@pytest.mark.parametrize("field", ["players", "rules", "digest", "timeout"])
def test_genesis_terms_are_validated(field: str) -> None:
    ids = identities()
    g = make_genesis(TABLE_ID, ids, get_preset("us"))
    body = dict(g.body)
    body[field] = {"players": [[b"\x00" * 32, "x"]] * 4, "rules": {}, "digest": b"\x00" * 32,
                   "timeout": 5}[field]  # fmt: skip
    forged = make_entry(ids, table=TABLE_ID, index=0, prev=bytes(32), author=0, kind="genesis",
                        body=body)  # fmt: skip
    with pytest.raises(MalformedEntry):
        parse_genesis(forged)


def test_genesis_needs_the_rules_player_count_and_distinct_keys() -> None:
    ids = identities()
    with pytest.raises(MalformedEntry):
        parse_genesis(make_genesis(TABLE_ID, ids[:3], get_preset("us")))
    with pytest.raises(MalformedEntry):
        parse_genesis(make_genesis(TABLE_ID, [ids[0], ids[1], ids[2], ids[0]], get_preset("us")))


def test_genesis_of_another_version_is_wrong_table() -> None:
    ids = identities()
    g = make_genesis(TABLE_ID, ids, get_preset("us"))
    obj = codec.unpack(g.wire)
    obj["v"] = 2
    with pytest.raises(WrongTable):
        parse_genesis(decode_entry(codec.pack(obj)))
