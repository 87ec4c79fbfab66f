"""The log entry: its canonical encoding, its hash, its signature, and the chain's step heads.

An entry is a msgpack map (canonical encoding, `buraco_p2p.codec`) with exactly these keys:

    "v"  protocol version (int, `PROTOCOL_VERSION`)
    "t"  table id (16 bytes)
    "i"  index in the log (int, the genesis is 0)
    "p"  previous step head (32 bytes; 32 zero bytes in the genesis)
    "a"  author: the party index, the author's position in the genesis player list
    "k"  kind (text, see `buraco_p2p.session.bodies`)
    "b"  body (a map, its schema set by the kind)
    "s"  signature: 64 bytes (Ed25519 by the author); in the genesis, a list of one signature
         per party, in party order (every party signs the table's terms)

Signature input: `SIGN_DOMAIN || pack(the map without "s")`.
Entry hash: `SHA-256(HASH_DOMAIN || pack(the whole map))` (the signature included: Ed25519 is
deterministic, so one author's one content has one encoding, and the chain commits to who
signed).

Steps. The log is a sequence of steps: a step is one entry (a move, a shuffle) or a round of
entries by several parties appended concurrently (keys, commitments, shares, result
signatures), ordered by author. Every entry of a step carries the same `p`: the head of the
step before it, `SHA-256(STEP_DOMAIN || h_1 || ... || h_m)` over the hashes of that step's
entries in log order. So every entry commits to everything before its step, the entries of a
round can be made without waiting for each other (their indices follow from the round's
authors), and the next step commits to the whole round.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Self

from buraco_p2p import codec
from buraco_p2p.net.channel.errors import BadSignature as _IdentityBadSignature
from buraco_p2p.net.channel.identity import Identity, PeerKey
from buraco_p2p.session.errors import BadSignature, MalformedEntry

__all__ = [
    "GENESIS_PREV",
    "HASH_DOMAIN",
    "MAX_ENTRY_BYTES",
    "PROTOCOL_VERSION",
    "SIGN_DOMAIN",
    "STEP_DOMAIN",
    "TABLE_ID_BYTES",
    "Entry",
    "decode_entry",
    "make_entry",
    "step_head",
]

PROTOCOL_VERSION: Final = 1
TABLE_ID_BYTES: Final = 16
SIGN_DOMAIN: Final = b"buraco-p2p/log/v1/sign\x00"
HASH_DOMAIN: Final = b"buraco-p2p/log/v1/entry\x00"
STEP_DOMAIN: Final = b"buraco-p2p/log/v1/step\x00"
GENESIS_PREV: Final = bytes(32)
MAX_ENTRY_BYTES: Final = 1 << 20
MAX_INDEX: Final = 1 << 32
MAX_PARTIES: Final = 8
_KEYS: Final = frozenset("vtipakbs")
_LIMITS: Final = codec.Limits(max_bytes=MAX_ENTRY_BYTES)


@dataclass(frozen=True, slots=True)
class Entry:
    """One signed log entry. Build with `make_entry` (signing) or `decode_entry` (checking)."""

    def __copy__(self) -> Self:
        return self

    def __deepcopy__(self, memo: dict[int, object]) -> Self:
        """An immutable value: a copy of a table shares it."""
        return self

    version: int
    table: bytes
    index: int
    prev: bytes
    author: int
    kind: str
    body: Mapping[str, Any]
    sig: bytes | tuple[bytes, ...]
    wire: bytes = field(repr=False, compare=False)
    hash: bytes = field(repr=False, compare=False)

    def unsigned(self) -> dict[str, Any]:
        return {
            "v": self.version,
            "t": self.table,
            "i": self.index,
            "p": self.prev,
            "a": self.author,
            "k": self.kind,
            "b": dict(self.body),
        }

    def signing_bytes(self) -> bytes:
        return signing_bytes(self.unsigned())

    def verify(self, keys: tuple[PeerKey, ...]) -> None:
        """Check the signature(s) against the parties' identity keys; raise `BadSignature`."""
        data = self.signing_bytes()
        if isinstance(self.sig, tuple):
            if len(self.sig) != len(keys):
                raise BadSignature(
                    f"{len(self.sig)} signatures for {len(keys)} parties",
                    index=self.index,
                    author=self.author,
                    evidence=(self.wire,),
                )
            signers = list(enumerate(self.sig))
        else:
            if not 0 <= self.author < len(keys):
                raise BadSignature(
                    f"no party {self.author}", index=self.index, author=None, evidence=(self.wire,)
                )
            signers = [(self.author, self.sig)]
        for party, sig in signers:
            try:
                keys[party].verify(sig, data)
            except _IdentityBadSignature as exc:
                raise BadSignature(
                    f"signature of party {party} does not verify: {exc}",
                    index=self.index,
                    author=party,
                    evidence=(self.wire,),
                ) from None


def signing_bytes(unsigned: Mapping[str, Any]) -> bytes:
    return SIGN_DOMAIN + codec.pack(unsigned, limits=_LIMITS)


def step_head(hashes: Iterable[bytes]) -> bytes:
    """The head of a step: what every entry of the next step names as `p`."""
    return hashlib.sha256(STEP_DOMAIN + b"".join(hashes)).digest()


def _finish(
    unsigned: dict[str, Any], sig: bytes | tuple[bytes, ...], wire: bytes | None = None
) -> Entry:
    if wire is None:
        full = dict(unsigned)
        full["s"] = list(sig) if isinstance(sig, tuple) else sig
        wire = codec.pack(full, limits=_LIMITS)
    return Entry(
        version=unsigned["v"],
        table=unsigned["t"],
        index=unsigned["i"],
        prev=unsigned["p"],
        author=unsigned["a"],
        kind=unsigned["k"],
        body=unsigned["b"],
        sig=sig,
        wire=wire,
        hash=hashlib.sha256(HASH_DOMAIN + wire).digest(),
    )


def make_entry(
    signers: Identity | Iterable[Identity],
    *,
    table: bytes,
    index: int,
    prev: bytes,
    author: int,
    kind: str,
    body: Mapping[str, Any],
) -> Entry:
    """Sign and encode an entry. Several `signers` (in party order) make a genesis."""
    unsigned = {
        "v": PROTOCOL_VERSION,
        "t": table,
        "i": index,
        "p": prev,
        "a": author,
        "k": kind,
        "b": dict(body),
    }
    data = signing_bytes(unsigned)
    if isinstance(signers, Identity):
        return _finish(unsigned, signers.sign(data))
    return _finish(unsigned, tuple(s.sign(data) for s in signers))


def decode_entry(data: bytes) -> Entry:
    """Parse an entry's bytes: canonical msgpack, exactly the fields above, right types and
    sizes. Signatures, the chain and the body's schema are checked by the table."""

    def bad(reason: str, index: int | None = None, author: int | None = None) -> MalformedEntry:
        return MalformedEntry(reason, index=index, author=author, evidence=(bytes(data),))

    try:
        obj = codec.unpack(data, limits=_LIMITS, canonical=True)
    except codec.DecodeError as exc:
        raise bad(f"not a canonical msgpack entry: {exc}") from None
    if not isinstance(obj, dict) or set(obj) != _KEYS:
        raise bad("an entry is a map with the keys v, t, i, p, a, k, b, s")
    index, author = obj["i"], obj["a"]
    if type(index) is not int or not 0 <= index < MAX_INDEX:
        raise bad(f"index {index!r} is not an integer in [0, 2^32)")
    if type(author) is not int or not 0 <= author < MAX_PARTIES:
        raise bad(f"author {author!r} is not a party index", index)
    if type(obj["v"]) is not int:
        raise bad("version is not an integer", index, author)
    if not isinstance(obj["t"], bytes) or len(obj["t"]) != TABLE_ID_BYTES:
        raise bad(f"table id is not {TABLE_ID_BYTES} bytes", index, author)
    if not isinstance(obj["p"], bytes) or len(obj["p"]) != 32:
        raise bad("previous hash is not 32 bytes", index, author)
    kind = obj["k"]
    if not isinstance(kind, str) or not 0 < len(kind) <= 16:
        raise bad("kind is not a short text", index, author)
    if not isinstance(obj["b"], dict) or not all(isinstance(k, str) for k in obj["b"]):
        raise bad("body is not a map with text keys", index, author)
    sig = obj["s"]
    if isinstance(sig, list):
        if not 1 <= len(sig) <= MAX_PARTIES or not all(
            isinstance(s, bytes) and len(s) == 64 for s in sig
        ):
            raise bad("a signature list holds 64-byte signatures", index, author)
        sig = tuple(sig)
    elif not isinstance(sig, bytes) or len(sig) != 64:
        raise bad("signature is not 64 bytes", index, author)
    unsigned = {k: obj[k] for k in "vtipakb"}
    return _finish(unsigned, sig, bytes(data))  # canonical: these are the bytes pack() makes
