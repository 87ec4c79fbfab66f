"""Identities: persistence, file safety, fingerprints and signatures."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from buraco_p2p.net.channel.errors import BadSignature, IdentityError
from buraco_p2p.net.channel.identity import (
    HOME_ENV,
    IDENTITY_FILE,
    Identity,
    PeerKey,
    default_config_dir,
    load_or_create_identity,
    validate_nickname,
)

# RFC 8032, section 7.1, test 1.
RFC_SEED = bytes.fromhex("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60")
RFC_PUBLIC = bytes.fromhex("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a")
RFC_SIGNATURE = bytes.fromhex(
    "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"
)


def test_first_run_creates_a_private_file_and_later_runs_load_it(tmp_path: Path) -> None:
    home = tmp_path / "cfg"
    first = load_or_create_identity(home, "Ana")
    path = home / IDENTITY_FILE
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(home.stat().st_mode) & 0o077 == 0
    again = load_or_create_identity(home)
    assert again.public == first.public
    assert again.nickname == "Ana"
    assert not [p for p in home.iterdir() if p.name != IDENTITY_FILE]  # no temp files left


def test_new_nickname_keeps_the_key(tmp_path: Path) -> None:
    first = load_or_create_identity(tmp_path, "Ana")
    renamed = load_or_create_identity(tmp_path, "Ana Paula")
    assert renamed.public == first.public
    assert load_or_create_identity(tmp_path).nickname == "Ana Paula"


def test_env_variable_overrides_the_config_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(HOME_ENV, str(tmp_path / "env-home"))
    assert default_config_dir() == tmp_path / "env-home"
    identity = load_or_create_identity(nickname="Bia")
    assert (tmp_path / "env-home" / IDENTITY_FILE).exists()
    assert load_or_create_identity().public == identity.public


def test_two_homes_give_two_identities(tmp_path: Path) -> None:
    a = load_or_create_identity(tmp_path / "a", "A")
    b = load_or_create_identity(tmp_path / "b", "B")
    assert a.public != b.public
    assert a.public.fingerprint() != b.public.fingerprint()


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"\xff\xfe",
        b"[]",
        b"not json",
        json.dumps({"version": 2, "nickname": "x", "ed25519_seed": "AA=="}).encode(),
        json.dumps({"version": 1, "nickname": "x", "ed25519_seed": "AAAA"}).encode(),
        json.dumps({"version": 1, "nickname": "x", "ed25519_seed": "!!"}).encode(),
        json.dumps({"version": 1, "nickname": "\x1b[2J", "ed25519_seed": "A" * 43 + "="}).encode(),
        json.dumps({"version": 1, "ed25519_seed": "A" * 43 + "="}).encode(),
        b" " * 10_000,
    ],
)
def test_corrupt_file_is_a_clear_error_and_is_not_replaced(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / IDENTITY_FILE
    path.write_bytes(content)
    with pytest.raises(IdentityError, match="corrupt"):
        load_or_create_identity(tmp_path)
    assert path.read_bytes() == content


def test_fingerprint_that_does_not_match_the_key_is_corrupt(tmp_path: Path) -> None:
    load_or_create_identity(tmp_path, "Ana")
    path = tmp_path / IDENTITY_FILE
    document = json.loads(path.read_text())
    document["fingerprint"] = "aaaa-aaaa-aaaa-aaaa-aaaa"
    path.write_text(json.dumps(document))
    with pytest.raises(IdentityError, match="fingerprint"):
        load_or_create_identity(tmp_path)


def test_unreadable_file_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / IDENTITY_FILE
    path.mkdir()  # a directory where the file should be
    with pytest.raises(IdentityError, match="cannot read"):
        load_or_create_identity(tmp_path)


def test_invalid_nickname_is_an_identity_error(tmp_path: Path) -> None:
    with pytest.raises(IdentityError, match="nickname"):
        load_or_create_identity(tmp_path, "bad\nname")
    assert not (tmp_path / IDENTITY_FILE).exists()


@pytest.mark.parametrize(
    "name", ["", "   ", "x" * 25, "a\x00b", "a\u202eb", "\x1b[31mred", "line\u2028sep"]
)
def test_unprintable_or_overlong_nicknames_are_refused(name: str) -> None:
    with pytest.raises(ValueError):
        validate_nickname(name)


def test_nickname_is_normalised() -> None:
    assert validate_nickname("  Jose\u0301 ") == "Jos\u00e9"


def test_known_answer_rfc8032() -> None:
    identity = Identity.from_seed(RFC_SEED, "rfc")
    assert identity.public.raw == RFC_PUBLIC
    assert identity.sign(b"") == RFC_SIGNATURE
    identity.public.verify(RFC_SIGNATURE, b"")


def test_signatures_verify_only_for_the_signed_data_and_key() -> None:
    alice, bob = Identity.generate("alice"), Identity.generate("bob")
    signature = alice.sign(b"move 1")
    alice.public.verify(signature, b"move 1")
    with pytest.raises(BadSignature):
        alice.public.verify(signature, b"move 2")
    with pytest.raises(BadSignature):
        bob.public.verify(signature, b"move 1")
    flipped = bytes([signature[0] ^ 1]) + signature[1:]
    with pytest.raises(BadSignature):
        alice.public.verify(flipped, b"move 1")
    with pytest.raises(BadSignature, match="64 bytes"):
        alice.public.verify(signature[:-1], b"move 1")


def test_fingerprint_format_and_stability() -> None:
    key = PeerKey(RFC_PUBLIC)
    fingerprint = key.fingerprint()
    groups = fingerprint.split("-")
    assert len(groups) == 5
    assert all(len(g) == 4 and g.isalnum() and g == g.lower() for g in groups)
    assert set(fingerprint.replace("-", "")) <= set("abcdefghijklmnopqrstuvwxyz234567")
    assert key.fingerprint() == PeerKey(bytes(RFC_PUBLIC)).fingerprint()
    assert key.short() == groups[0]
    assert str(key) == fingerprint


def test_fingerprints_differ_for_one_bit_of_key() -> None:
    seen = set()
    for _ in range(50):
        seen.add(Identity.generate("x").public.fingerprint())
    assert len(seen) == 50


def test_peer_key_validation_and_hashing() -> None:
    with pytest.raises(ValueError):
        PeerKey(b"\x00" * 31)
    with pytest.raises(ValueError):
        PeerKey("not bytes")  # type: ignore[arg-type]
    a = PeerKey(RFC_PUBLIC)
    b = PeerKey(raw=bytes(RFC_PUBLIC))
    assert a == b and hash(a) == hash(b)
    assert len({a, b}) == 1


def test_identity_file_write_is_atomic_under_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    original = load_or_create_identity(tmp_path, "Ana")
    before = (tmp_path / IDENTITY_FILE).read_bytes()

    def fail_replace(src: object, dst: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", fail_replace)
    with pytest.raises(IdentityError, match="cannot write"):
        load_or_create_identity(tmp_path, "Other")
    monkeypatch.undo()
    assert (tmp_path / IDENTITY_FILE).read_bytes() == before
    assert load_or_create_identity(tmp_path).public == original.public
    assert [p.name for p in tmp_path.iterdir()] == [IDENTITY_FILE]


def test_loading_takes_back_access_given_to_others(tmp_path: Path) -> None:
    first = load_or_create_identity(tmp_path, "Ana")
    path = tmp_path / IDENTITY_FILE
    path.chmod(0o644)
    assert load_or_create_identity(tmp_path).public == first.public
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
