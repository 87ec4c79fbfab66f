"""The engine's exact error types.

Every rejection carries a machine-readable `IllegalMoveCode` (stable: the session logs it and
names the offending peer with it) and a human message. A rejected move never changes the state.
"""

from __future__ import annotations

from enum import Enum


class IllegalMoveCode(Enum):
    """Why a move was rejected. Values are stable strings, safe to log or send."""

    BAD_WIRE = "bad_wire"
    WRONG_PLAYER = "wrong_player"
    WRONG_PHASE = "wrong_phase"
    HAND_OVER = "hand_over"
    NOT_HELD = "not_held"
    DUPLICATE_SLOT = "duplicate_slot"
    UNKNOWN_CARD = "unknown_card"
    EMPTY_PILE = "empty_pile"
    EMPTY_STOCK = "empty_stock"
    ILLEGAL_MELD = "illegal_meld"
    NO_SUCH_MELD = "no_such_meld"
    DUPLICATE_SET = "duplicate_set"
    NOT_OPENED = "not_opened"
    CANNOT_EMPTY_HAND = "cannot_empty_hand"
    WILD_GOING_OUT = "wild_going_out"
    DISCARD_TAKEN_CARD = "discard_taken_card"
    MUST_MELD_TOP = "must_meld_top"
    PILE_NOT_JUSTIFIED = "pile_not_justified"
    GO_OUT_BY_DISCARD_ONLY = "go_out_by_discard_only"
    NO_FIRST_CARD = "no_first_card"


class IllegalMove(ValueError):
    """A move that the rules do not allow in this state (or that cannot be decoded).

    `seat` is the player who sent it, when known, so that the session can name the peer.
    """

    def __init__(self, code: IllegalMoveCode, message: str, seat: int | None = None) -> None:
        self.code = code
        self.message = message
        self.seat = seat
        who = f"player {seat}: " if seat is not None else ""
        super().__init__(f"{who}{message} [{code.value}]")

    def __reduce__(self) -> tuple[type[IllegalMove], tuple[IllegalMoveCode, str, int | None]]:
        # The default rebuilds an exception from `args` (the formatted text alone): copy and
        # pickle need the constructor's own arguments back.
        return type(self), (self.code, self.message, self.seat)


class RevealError(ValueError):
    """A card identity handed to a view that contradicts what it knows or may know."""
