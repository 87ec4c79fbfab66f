"""docs/protocol.md names every code a refusal can carry, so that a second verifier can match
them: each move refusal code in 3.4's table, each codec reason of codec.json in 2.1."""

from __future__ import annotations

import json
import re
from pathlib import Path

from buraco_p2p.engine.errors import IllegalMoveCode

ROOT = Path(__file__).resolve().parents[2]
SPEC = (ROOT / "docs" / "protocol.md").read_text(encoding="utf-8")


def _section(title: str, next_title: str) -> str:
    start = SPEC.index(title)
    return SPEC[start : SPEC.index(next_title, start)]


def test_every_move_refusal_code_is_in_the_table_of_3_4() -> None:
    table = _section("**Refusal codes.**", "### Test vectors (section 3)")
    listed = set(re.findall(r"^\| `([a-z_]+)`(?:, `([a-z_]+)`)? \|", table, re.M))
    codes = {c for pair in listed for c in pair if c}
    assert codes == {c.value for c in IllegalMoveCode}


def test_every_codec_reason_of_the_vectors_is_named_in_2_1() -> None:
    codec = json.loads((ROOT / "protocol" / "vectors" / "codec.json").read_text("utf-8"))
    limits = {c["reason"] for c in codec["limits"] if not c["accepted"]}
    text = _section("### 2.1 Codec", "### 2.2 Identity")
    assert limits <= {"length_over_limit", "too_deep", "too_large", "too_many_objects"}
    for reason in limits | {"too_deep"}:
        assert f"`{reason}`" in text, reason
