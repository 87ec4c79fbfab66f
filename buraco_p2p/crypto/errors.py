"""The crypto layer's exceptions.

Everything that a peer sends us and that fails a check raises a subclass of `CryptoError`, which
is a `ValueError`: callers that only care that input was bad can catch `ValueError`, callers that
must name a cheater read the attributes (which proof, which field, which party).
"""

from __future__ import annotations


class CryptoError(ValueError):
    """Bad cryptographic input: an encoding, proof, share or commitment that does not check."""


class InvalidPoint(CryptoError):
    """Bytes that are not the canonical encoding of an allowed ristretto255 element."""


class InvalidScalar(CryptoError):
    """Bytes or values that are not a canonical scalar mod l (or a zero where zero is refused)."""


class ProofError(CryptoError):
    """A zero-knowledge proof (or a value it vouches for) that does not verify.

    `proof` names the kind of proof (`"schnorr"`, `"chaum-pedersen"`, `"shuffle"`, ...),
    `field` the part that failed when it is known (`"response"`, `"commitment"`, ...), and
    `party` the prover (its id bytes or seat) when the caller knows it, so the session can
    name the cheater.
    """

    def __init__(
        self,
        proof: str,
        reason: str,
        *,
        field: str | None = None,
        party: object = None,
    ) -> None:
        self.proof = proof
        self.reason = reason
        self.field = field
        self.party = party
        where = f" (field {field})" if field else ""
        who = f" from {party!r}" if party is not None else ""
        super().__init__(f"{proof} proof{who} rejected{where}: {reason}")


class CommitmentMismatch(CryptoError):
    """A commit-reveal opening that does not match what the party committed to."""

    def __init__(self, party: int, reason: str = "reveal does not match the commitment") -> None:
        self.party = party
        self.reason = reason
        super().__init__(f"party {party}: {reason}")


class CommitRevealError(CryptoError):
    """A commitment or reveal out of turn or repeated: a protocol error, not a mismatch."""


class NotACard(CryptoError):
    """An opened ciphertext whose plaintext is not any card's point.

    Honest shares of an honest deck always open to a card, so this is evidence that a share,
    a shuffle or a ciphertext was forged.
    """
