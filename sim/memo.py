"""The group operations remembered, so thousands of schedules over the same deals cost little.

Every schedule of the simulator deals from a few table seeds, and a peer's randomness is
keyed to its log: schedules that share a log prefix compute the very same ristretto255
scalar multiplications, additions and point checks, for the same shuffles, shares and
proofs. These are pure functions of their bytes, so the simulator remembers their results
(`remembered`): the peers, the checks and the verifier run unchanged, only faster. A bounded
table (`LIMIT` results) is cleared when full.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import rbcl

__all__ = ["LIMIT", "remembered"]

LIMIT = 2_000_000
_NAMES = (
    "crypto_scalarmult_ristretto255_allow_scalar_zero",
    "crypto_scalarmult_ristretto255_base_allow_scalar_zero",
    "crypto_core_ristretto255_add",
    "crypto_core_ristretto255_sub",
    "crypto_core_ristretto255_is_valid_point",
)


def _remember(fn: Callable[..., Any], table: dict[tuple[Any, ...], Any]) -> Callable[..., Any]:
    def call(*args: Any) -> Any:
        key = (fn, *(bytes(a) for a in args))
        got = table.get(key)
        if got is None:
            got = fn(*args)
            if len(table) >= LIMIT:
                table.clear()
            table[key] = got
        return got

    return call


_TABLE: dict[tuple[Any, ...], Any] = {}


@contextlib.contextmanager
def remembered() -> Iterator[None]:
    """Within this block the group operations that `rbcl` offers are remembered (the
    module's functions are swapped for remembering ones, and put back after)."""
    saved = {name: getattr(rbcl, name) for name in _NAMES}
    try:
        for name, fn in saved.items():
            setattr(rbcl, name, _remember(fn, _TABLE))
        yield
    finally:
        for name, fn in saved.items():
            setattr(rbcl, name, fn)
