"""Pure work remembered, so thousands of schedules over the same deals cost little.

Every schedule of the simulator forks one of a few honest tables, and a peer's randomness is
keyed to its log: schedules and peers that share a log compute the very same ristretto255
scalar multiplications and point checks (for the same shuffles, shares and proofs), check the
same shuffle and share proofs, entries' signatures and Ed25519 signatures, and decode the
same entries. These are pure functions of their
bytes, so within `remembered()` their results are remembered: the peers, the checks and the
verifier run unchanged, only faster. Each table is cleared when it holds `LIMIT` results.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Callable, Iterator
from typing import Any

import rbcl

from buraco_p2p.crypto.proofcheck import CheckNow
from buraco_p2p.net.channel.identity import PeerKey
from buraco_p2p.session import entry as entry_module
from buraco_p2p.session import inbox as inbox_module
from buraco_p2p.session import ledger as ledger_module
from buraco_p2p.session.entry import Entry
from buraco_p2p.session.errors import LogError
from sim import seat as seat_module

__all__ = ["LIMIT", "remembered"]

LIMIT = 1_500_000
_GROUP = (
    "crypto_scalarmult_ristretto255_allow_scalar_zero",
    "crypto_scalarmult_ristretto255_base_allow_scalar_zero",
    "crypto_core_ristretto255_add",
    "crypto_core_ristretto255_sub",
    "crypto_core_ristretto255_is_valid_point",
)
_DECODERS = (entry_module, inbox_module, ledger_module, seat_module)

_TABLES: dict[str, dict[Any, Any]] = {}


def _table(name: str) -> dict[Any, Any]:
    table = _TABLES.setdefault(name, {})
    if len(table) >= LIMIT:
        table.clear()
    return table


def _group(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    table = _TABLES.setdefault(name, {})

    def call(*args: bytes) -> Any:
        got = table.get(args)
        if got is None:
            got = fn(*args)
            if len(table) >= LIMIT:
                table.clear()
            table[args] = got
        return got

    return call


def _verify(fn: Callable[[PeerKey, bytes, bytes], None]) -> Callable[[PeerKey, bytes, bytes], None]:
    def verify(self: PeerKey, signature: bytes, data: bytes) -> None:
        table = _table("verify")
        key = (self.raw, bytes(signature) if isinstance(signature, bytes) else None,
               hashlib.sha256(data).digest())  # fmt: skip
        got: BaseException | bool | None = table.get(key)
        if got is None:
            try:
                fn(self, signature, data)
                got = True
            except Exception as exc:  # the refusal itself is remembered, and raised again
                got = exc
            table[key] = got
        if isinstance(got, BaseException):
            raise got

    return verify


def _entry_verify(fn: Callable[[Entry, tuple[PeerKey, ...]], None]) -> Callable[..., None]:
    """`Entry.verify`, remembered by the entry's bytes and the keys it is checked against
    (what it packs to sign is a function of those bytes)."""

    def verify(self: Entry, keys: tuple[PeerKey, ...]) -> None:
        table = _table("entry")
        key = (self.wire, tuple(k.raw for k in keys))
        got: BaseException | bool | None = table.get(key)
        if got is None:
            try:
                fn(self, keys)
                got = True
            except Exception as exc:
                got = exc
            table[key] = got
        if isinstance(got, BaseException):
            raise got

    return verify


def _check(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    """A deck's proof check (`CheckNow`), remembered by its arguments: the proof context,
    points and ciphertexts are values (frozen, hashed by their bytes), and a refusal is
    remembered and raised again like a signature's."""

    def check(self: CheckNow, *args: Any) -> Any:
        table = _table(name)
        key = tuple(tuple(a) if isinstance(a, list) else a for a in args)
        got: Any = table.get(key, _MISSING)
        if got is _MISSING:
            try:
                got = fn(self, *args)
            except Exception as exc:
                got = exc
            table[key] = got
        if isinstance(got, BaseException):
            raise got
        return got

    return check


_MISSING = object()


def _decode(fn: Callable[[bytes], Any]) -> Callable[[bytes], Any]:
    def decode(data: Any) -> Any:
        if not isinstance(data, bytes):
            return fn(data)
        table = _table("decode")
        got: Any = table.get(data)
        if got is None:
            try:
                got = fn(data)
            except LogError as exc:
                got = exc
            table[data] = got
        if isinstance(got, LogError):
            raise got
        return got

    return decode


@contextlib.contextmanager
def remembered() -> Iterator[None]:
    """Within this block the group operations, proof and signature checks and entry decoding
    are remembered (the functions are swapped for remembering ones, and put back after)."""
    group = {name: getattr(rbcl, name) for name in _GROUP}
    verify = PeerKey.verify
    checks: dict[str, Callable[..., Any]] = {"shuffle": CheckNow.shuffle, "shares": CheckNow.shares}
    entry_verify = Entry.verify
    decoders = [(m, m.decode_entry) for m in _DECODERS]
    try:
        for name, fn in group.items():
            setattr(rbcl, name, _group(name, fn))
        PeerKey.verify = _verify(verify)  # type: ignore[method-assign, assignment]
        for name, fn in checks.items():
            setattr(CheckNow, name, _check(name, fn))
        Entry.verify = _entry_verify(entry_verify)  # type: ignore[method-assign]
        decode = _decode(entry_module.decode_entry)
        for m, _ in decoders:
            m.decode_entry = decode  # type: ignore[attr-defined]
        yield
    finally:
        for name, fn in group.items():
            setattr(rbcl, name, fn)
        PeerKey.verify = verify  # type: ignore[method-assign]
        for name, fn in checks.items():
            setattr(CheckNow, name, fn)
        Entry.verify = entry_verify  # type: ignore[method-assign]
        for m, fn in decoders:
            m.decode_entry = fn  # type: ignore[attr-defined]
