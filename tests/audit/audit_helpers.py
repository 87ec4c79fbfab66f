"""Match logs for the audit tests: the whole match of protocol/vectors/session.json, played by
four in-memory session peers with every check on, from fixed identities and seeds (so every
run audits the same bytes, and the suite plays it once)."""

from __future__ import annotations

from functools import cache

from buraco_p2p.logfile import encode_log
from protocol.gen.session import TABLE_ID, identities, vector_log

__all__ = ["TABLE_ID", "identities", "match_log"]


@cache
def match_log() -> bytes:
    """The log file of the vectors' match."""
    return encode_log(e.wire for e in vector_log())
