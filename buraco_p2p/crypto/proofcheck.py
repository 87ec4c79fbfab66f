"""Who runs a deck's three proof checks: the deck itself, at once (the default), or its caller.

A `DeckSession` verifies every key, shuffle and share proof it receives before the message
changes anything (see `buraco_p2p.crypto.deck`). These checks are pure functions of the
message and of values the deck already holds (the proof context, the table key, the decks,
a seat's key), and they are most of the cost of replaying a log. `ProofChecks` names them,
so that an offline verifier can hand them to other processes while it replays the rest of the
log (`buraco-p2p verify --jobs`): it passes its own `ProofChecks` to the deck, which calls it
in place of running the check itself, with exactly the arguments it would have checked.

An implementation must either run the check as `CHECK_NOW` does (raising its `ProofError`) or
answer for it: one that answers without checking must treat the replay as provisional until
the check it stood in for has been run, and then give the verdict of a replay that ran it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, Protocol

from buraco_p2p.crypto.elgamal import Ciphertext
from buraco_p2p.crypto.group import Point
from buraco_p2p.crypto.keys import KeyAnnouncement
from buraco_p2p.crypto.shares import ShareBatch, verify_share_batch
from buraco_p2p.crypto.shuffle import decode_and_verify
from buraco_p2p.crypto.transcript import ProofContext

__all__ = ["CHECK_NOW", "CheckNow", "ProofChecks"]


class ProofChecks(Protocol):
    """The deck's proof checks, each with the signature of the function `CheckNow` calls."""

    def key(self, ann: KeyAnnouncement) -> None:
        """A per-hand key's Schnorr proof (`KeyAnnouncement.verify`)."""
        ...

    def shuffle(
        self,
        ctx: ProofContext,
        table_key: Point,
        deck_in: Sequence[Ciphertext],
        deck_out: bytes,
        proof: bytes,
    ) -> tuple[Ciphertext, ...]:
        """A shuffle's output deck, decoded, once its proof checks
        (`buraco_p2p.crypto.shuffle.decode_and_verify`)."""
        ...

    def shares(
        self, public: Point, cts: Sequence[Ciphertext], batch: ShareBatch, ctx: ProofContext
    ) -> None:
        """A batch of decryption shares' Chaum-Pedersen proof
        (`buraco_p2p.crypto.shares.verify_share_batch`)."""
        ...


class CheckNow:
    """Every check run where it is asked for: what a peer does, and `verify --jobs 1`."""

    def key(self, ann: KeyAnnouncement) -> None:
        ann.verify()

    def shuffle(
        self,
        ctx: ProofContext,
        table_key: Point,
        deck_in: Sequence[Ciphertext],
        deck_out: bytes,
        proof: bytes,
    ) -> tuple[Ciphertext, ...]:
        return decode_and_verify(ctx, table_key, deck_in, deck_out, proof)

    def shares(
        self, public: Point, cts: Sequence[Ciphertext], batch: ShareBatch, ctx: ProofContext
    ) -> None:
        verify_share_batch(public, cts, batch, ctx)


CHECK_NOW: Final = CheckNow()
