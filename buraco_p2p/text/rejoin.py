"""Re-join codes (docs/protocol.md 2.15) in words: what a host whose public address changed
shows beside its code. A joiner that pastes one is answered in the line client's words
(`play.line.take_rejoin_code`), the full-screen client's too."""

from __future__ import annotations

from typing import Final

__all__ = ["HOST_CODE_LINE", "host_code_lines"]

HOST_CODE_LINE: Final = "your address changed: give this code to players who do not come back"


def host_code_lines(code: str) -> tuple[str, str]:
    """The host's two lines: what the code is for, then the code alone on its line (to
    select and copy whole)."""
    return HOST_CODE_LINE, code
