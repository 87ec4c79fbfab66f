"""docs/rules.md documents every parameter, preset and meld error code."""

from pathlib import Path

import pytest

from buraco_p2p.rules import LINE_NAMES, MELD_ERROR_CODES, OVERRIDABLE, PRESETS

DOC = (Path(__file__).parents[2] / "docs" / "rules.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("key", OVERRIDABLE)
def test_every_parameter_is_documented(key: str) -> None:
    documented = f"`{key}`" in DOC or (
        key in ("hand_size", "pots", "pot_size") and "`hand_size`, `pots`, `pot_size`" in DOC
    )
    assert documented, key


@pytest.mark.parametrize("name", list(PRESETS))
def test_every_preset_is_documented(name: str) -> None:
    assert f"`{name}`" in DOC


@pytest.mark.parametrize("code", MELD_ERROR_CODES)
def test_every_meld_error_code_is_documented(code: str) -> None:
    assert f"| `{code}` |" in DOC


@pytest.mark.parametrize("line", LINE_NAMES)
def test_every_score_line_is_documented(line: str) -> None:
    assert f"| `{line}` |" in DOC
