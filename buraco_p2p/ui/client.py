"""The client's own state and what each key means, apart from any terminal.

`Client` holds the latest `TableSnapshot` and what the player is doing with it: the cursor in
the hand, the selected cards, meld groups staged for one lay-down, the hint being shown, the
open panel, the chat line being typed. Its methods are the player's intents; a move is built,
checked with the engine (`view.check`, `legal_moves`: the client knows no rule) and handed to
`send` (which submits it to the table) only when the engine accepts it, otherwise the engine's
reason is shown in words. Keeping this free of prompt_toolkit lets the tests and the benchmark
drive it directly.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum

from buraco_p2p.engine import (
    AddToMeld,
    Discard,
    DrawStock,
    HandState,
    IllegalMove,
    LayDown,
    Move,
    Phase,
    TableMeld,
    TakeDiscard,
    TurnUpFirst,
    legal_moves,
)
from buraco_p2p.engine.params import WILD_CODES, FirstDraw
from buraco_p2p.text.agreement import left_text, proposal_text
from buraco_p2p.text.glyphs import Glyphs, sort_key_rank, sort_key_suit
from buraco_p2p.text.narration import count
from buraco_p2p.text.words import (
    explain,
    in_glyphs,
    move_slots,
    suggest,
    wild_discard_question,
)
from buraco_p2p.ui.feed import TableSnapshot


class Panel(Enum):
    """What covers the table, if anything."""

    NONE = "none"
    HELP = "help"
    RULES = "rules"
    PILE = "pile"
    HISTORY = "history"
    HAND_END = "hand_end"
    CHAT = "chat"


@dataclass(slots=True)
class Message:
    text: str
    kind: str = "info"  # info | error | hint | wait (about a wait: gone when it ends)


Send = Callable[[Move], None]


@dataclass(frozen=True, slots=True)
class StagedOpening:
    """The melds staged toward this side's opening, as the engine would count them."""

    points: int  # card points toward the minimum (with what the engine holds this turn)
    need: int  # the side's minimum now
    melds: tuple[TableMeld, ...]  # as the engine would hold them (empty when `reached`)
    reached: bool  # sent now, they would open the side


def first_card_ahead(view: HandState) -> bool:
    """Whether the draw on turn is the hand's first, which may be turned up (`t`)."""
    return view.params.first_draw is FirstDraw.PEEK and view.turns_played == 0


class Client:
    """The player's side of the table: intents in, moves out through `send`."""

    def __init__(self, snapshot: TableSnapshot, send: Send, glyphs: Glyphs | None = None) -> None:
        self.snap = snapshot
        self.send = send
        self.glyphs = glyphs or Glyphs(deck_size=snapshot.rules.deck_size)
        self.cursor = 0
        self.selected: list[int] = []
        self.staged: list[tuple[int, ...]] = []
        self.staged_ends: list[int] = []  # per staged group: 1 where a run's wild goes low
        self._staged_cache: tuple[object, StagedOpening | None] = (None, None)
        self.by_rank = False
        self.panel = Panel.NONE
        self.panel_page = 0
        self.rule_pages = 1  # as many as the last drawing of the rules panel needed
        self.message: Message | None = None
        self.hints: list[Move] = []
        self.hint_at = -1
        self.hint_version = -1
        self.confirm: tuple[str, Callable[[], object]] | None = None
        self.choosing_meld: tuple[int, ...] | None = None  # the cards to add, meld asked
        self.meld_numbers: tuple[int, ...] = ()  # the melds offered, numbered from 1
        self.meld_typed = ""  # the digits of a meld's number typed so far
        self.chat_text: str | None = None
        self.pending = False  # a move is on its way to the table
        self.ended_seen = -1  # history length whose hand-end panel was closed
        self.saved: list[str] | None = None  # what saving the log said, line by line
        self.chat_sent = ""
        self.new_cards: set[int] = set()  # cards that came into the hand this turn
        self.agree_action = ""  # end | void | replace: asked, waiting for y

    # ------------------------------------------------------------------ snapshots

    def update(self, snap: TableSnapshot) -> None:
        """A new snapshot: keep the selection to cards still held, mark the cards just drawn
        or taken, forget hints and refusals about a position the table has left."""
        old = self.snap
        before = set(self.hand())
        self.snap = snap
        held = set(self.hand())
        same_hand = (
            old.view is not None and snap.view is not None and old.view.setup == snap.view.setup
        )
        if not same_hand or (snap.view is not None and snap.view.turn != self.me):
            self.new_cards = set()
        elif held - before:
            self.new_cards = held - before
        self.new_cards &= held
        self.selected = [s for s in self.selected if s in held]
        if not self.my_turn() or not same_hand or old.view is None or (
            snap.view is not None and old.view.turn != snap.view.turn
        ):
            # Staged melds were never sent: they end with the turn that staged them.
            self.staged, self.staged_ends = [], []
        kept = [i for i, g in enumerate(self.staged) if set(g) <= held]
        self.staged = [self.staged[i] for i in kept]
        self.staged_ends = [self.staged_ends[i] for i in kept]
        if self.cursor >= len(held):
            self.cursor = max(0, len(held) - 1)
        if self.message is not None and self.message.kind == "wait" and (
            old.waiting != snap.waiting or old.timed_out != snap.timed_out
            or (old.view is not None and snap.view is not None
                and old.view.turn != snap.view.turn)
        ):  # fmt: skip
            self.message = None  # it was about a wait that is over
        if old.view is not None and snap.view is not None and (
            old.view.turn != snap.view.turn
            or old.view.phase is not snap.view.phase
            or old.view.setup != snap.view.setup
        ):
            # The table moved on: a hint or a refusal about the old position no longer holds.
            self.hints = []
            self.hint_at = -1
            if self.message is not None and self.message.kind in ("error", "hint"):
                self.message = None

    @property
    def view(self) -> HandState | None:
        return self.snap.view

    @property
    def me(self) -> int:
        return self.snap.me

    def hand(self) -> list[int]:
        """This seat's hand slots in the order they are drawn (sorted, grouped)."""
        view = self.view
        if view is None:
            return []
        slots = list(view.hands[self.me])
        key = sort_key_rank if self.by_rank else sort_key_suit

        def order(slot: int) -> tuple[int, int, int]:
            c = view.known[slot]
            return (9, 0, slot) if c < 0 else key(self.glyphs.face_of(c), c)

        return sorted(slots, key=order)

    def my_turn(self) -> bool:
        view = self.view
        return (
            view is not None
            and not view.ended
            and not self.snap.hand_over
            and view.turn == self.me
        )

    def say(self, text: str, kind: str = "info") -> None:
        self.message = Message(text, kind)

    # ------------------------------------------------------------------ selection

    def move_cursor(self, step: int) -> None:
        n = len(self.hand())
        if n:
            self.cursor = (self.cursor + step) % n

    def cursor_to(self, index: int) -> None:
        n = len(self.hand())
        if n:
            self.cursor = max(0, min(n - 1, index))

    def toggle(self, index: int | None = None) -> None:
        """Select or unselect the card under the cursor (or at `index`, for the mouse)."""
        hand = self.hand()
        if not hand:
            return
        if index is not None:
            self.cursor_to(index)
        slot = hand[self.cursor]
        if slot in self.selected:
            self.selected.remove(slot)
        elif not any(slot in g for g in self.staged):
            self.selected.append(slot)
        self._clear_hint()

    def undo(self) -> None:
        """Take back the last selection step: the last card picked, else the last group."""
        self._clear_hint()
        if self.selected:
            self.selected.pop()
        elif self.staged:
            staging = self.staging()
            self.selected = list(self.staged.pop())
            self.staged_ends.pop()
            if staging:
                self.say(self._staged_words("Taken back; the cards are selected again"))
        else:
            self.say("Nothing selected.")

    def clear(self) -> None:
        if self.staged and self.staging():
            self.say("The staged melds are taken back: nothing was sent.")
        else:
            self.message = None
        self.selected = []
        self.staged = []
        self.staged_ends = []
        self.choosing_meld = None
        self.confirm = None
        self._clear_hint()

    def sort_toggle(self) -> None:
        self.by_rank = not self.by_rank
        self.say(f"Hand sorted by {'rank' if self.by_rank else 'suit'}.")

    def _clear_hint(self) -> None:
        self.hint_at = -1

    # ------------------------------------------------------------------ moves

    def _try(self, move: Move) -> bool:
        """Check `move` with the engine; send it if legal, else say why not."""
        view = self.view
        if view is None or self.snap.hand_over:
            self.say("No hand is being played.", "error")
            return False
        if self.pending:
            self.say("Your last move is still on its way.", "error")
            return False
        err: IllegalMove | None = view.check(move)
        if err is not None:
            self.say(explain(err, view, self.glyphs), "error")
            return False
        self.pending = True
        self.message = None
        self.send(move)
        self.selected = []
        self.staged = []
        self.staged_ends = []
        self.choosing_meld = None
        self.hints = []
        self.hint_at = -1
        return True

    def draw(self) -> None:
        self._try(DrawStock(self.me))

    def take_pile(self) -> None:
        """Take the pile. Where the take must be justified, the selected cards are shown; with
        none selected, the one justification the engine finds is used, if it finds just one."""
        view = self.view
        if view is None:
            return
        if view.params.must_meld_top and not self.selected and view.turn == self.me:
            takes = [m for m in self._legal() if isinstance(m, TakeDiscard)]
            if len(takes) == 1:
                self._try(takes[0])
                return
            if len(takes) > 1:
                self.say("Select the cards that meld the pile's top card, then p.", "error")
                return
        self._try(TakeDiscard(self.me, tuple(self.selected)))

    def turn_up(self) -> None:
        """Turn up the hand's first card (where the rules offer it): only once it is drawn."""
        view = self.view
        if view is not None and self.my_turn() and view.phase is Phase.DRAW:
            if first_card_ahead(view):
                self.say("Draw first (d): the hand's first card is then yours to keep, or t "
                         "turns it up and draws another.", "error")  # fmt: skip
            else:
                self.say("Only the hand's first card can be turned up, once drawn: d draws, "
                         "p takes the pile.", "error")  # fmt: skip
            return
        self._try(TurnUpFirst(self.me))

    def discard(self, confirmed: bool = False, wild_ok: bool = False) -> None:
        hand = self.hand()
        if len(self.selected) > 1:
            self.say("Select one card to discard (u takes back a selection).", "error")
            return
        if self.selected:
            slot = self.selected[0]
        elif hand:
            slot = hand[self.cursor]
        else:
            return
        if any(slot in g for g in self.staged):
            self.say("That card is in a staged meld: u or Esc takes the meld back first.",
                     "error")  # fmt: skip
            return
        move = Discard(self.me, slot)
        staged = self.staged_opening() if self.staging() else None
        view = self.view
        if not wild_ok and view is not None and view.check(move) is None:
            card = view.known[slot]
            if card >= 0 and view.codes[card] in WILD_CODES:  # a wild: almost always a slip
                self.confirm = (wild_discard_question(self.glyphs.card(card)),
                                lambda: self.discard(confirmed, wild_ok=True))  # fmt: skip
                return
        if not confirmed and staged is not None and view is not None and view.check(move) is None:
            self.confirm = (
                f"Your staged melds ({staged.points} of {staged.need}) were never sent: they "
                "stay in your hand, no penalty. Press y to discard, n not to.",
                lambda: self.discard(confirmed=True),
            )
            return
        if not confirmed and self._fails_opening(move):
            self.confirm = (
                "Your side's opening is still under its minimum: ending the turn now is a "
                "failed attempt (the minimum rises). Press y to discard anyway, n not to.",
                lambda: self._try(move),
            )
            return
        self._try(move)

    def _fails_opening(self, move: Move) -> bool:
        """Whether the engine would count `move` as a failed opening attempt of this side."""
        view = self.view
        if view is None or view.check(move) is not None:
            return False
        side = self.snap.side_of(self.me)
        trial = view.copy()
        trial.push(move)
        return trial.failed[side] > view.failed[side]

    def stage(self) -> None:
        """Put the selected cards aside as one meld of a lay-down of several melds."""
        if not self.selected:
            self.say("Select cards first, then g to group them as one meld.", "error")
            return
        self.staged.append(tuple(self.selected))
        self.staged_ends.append(0)
        self.selected = []
        self.say(f"{count(len(self.staged), 'meld')} grouped: m lays them all down.")

    def staging(self) -> bool:
        """Whether `m` stages melds here instead of sending them: this side has not opened and
        the preset counts a whole turn's melds toward the minimum. A lay-down short of it would
        show the cards to everyone for good (the engine keeps them as the turn's opening, a
        failed attempt if the turn ends short), so the client holds them, unsent, until their
        sum reaches the minimum or the player asks for the failed attempt."""
        view = self.view
        if view is None or not self.my_turn() or not view.params.opening_by_turn:
            return False
        side = self.snap.side_of(self.me)
        return not view.opened[side] and view.initial_minimum(side, self.me) > 0

    def staged_opening(self) -> StagedOpening | None:
        """What the staged melds add up to toward the opening, as the engine counts them (with
        any opening the engine already holds this turn); None if nothing is staged or the
        engine would refuse them."""
        view = self.view
        if view is None or not self.staged:
            return None
        key = (self.snap.version, tuple(self.staged), tuple(self.staged_ends))
        if self._staged_cache[0] == key:
            return self._staged_cache[1]
        ends = tuple(self.staged_ends) if any(self.staged_ends) else ()
        found = self._opening_of(LayDown(self.me, tuple(self.staged), ends))
        self._staged_cache = (key, found)
        return found

    def _opening_of(self, move: LayDown) -> StagedOpening | None:
        view = self.view
        if view is None or view.check(move) is not None:
            return None
        side = self.snap.side_of(self.me)
        trial = view.copy()
        trial.push(move)
        need = view.initial_minimum(side, self.me)
        if trial.opened[side]:
            return StagedOpening(need, need, (), True)
        return StagedOpening(trial.opening_points(), need, tuple(trial.opening), False)

    def _staged_words(self, lead: str) -> str:
        staged = self.staged_opening()
        if staged is None:
            return f"{lead}: nothing staged."
        return (f"{lead}: opening so far: {staged.points} of {staged.need} (not sent: u or Esc "
                "takes it back); m with more cards adds a meld.")  # fmt: skip

    def meld(self, low_end: bool = False, confirmed: bool = False) -> None:
        """Lay down the staged groups and the selection as new melds, in one move. Where the
        opening is staged (`staging`), a lay-down short of the minimum is staged, not sent."""
        groups = [*self.staged]
        ends_of = [*self.staged_ends]
        if self.selected:
            groups.append(tuple(self.selected))
            ends_of.append(1 if low_end else 0)
        if not groups:
            self.say("Select the cards of a meld first (space), then m.", "error")
            return
        if low_end and not self.selected:
            ends_of = [1 for _ in groups]
        ends = tuple(ends_of) if any(ends_of) else ()
        move = LayDown(self.me, tuple(groups), ends)
        view = self.view
        if view is None:
            return
        if self.staging() and not confirmed:
            err = view.check(move)
            if err is not None:
                self.say(explain(err, view, self.glyphs), "error")
                return
            found = self._opening_of(move)
            if found is not None and not found.reached and self.selected:
                self.staged, self.staged_ends = groups, ends_of
                self.selected = []
                self._clear_hint()
                self.say(self._staged_words("Staged"), "hint")
                return
            if found is not None and not found.reached:
                # Nothing new selected: the player asks to send the staged melds short of
                # the minimum, which counts as a failed attempt if the turn ends short.
                side = self.snap.side_of(self.me)
                higher = view.rules.initial_meld_minimum(
                    view.setup.team_scores[view.score_index[self.me]], view.failed[side] + 1
                )
                self.confirm = (
                    f"Send {found.points} of {found.need} now? Everyone sees the cards; a turn "
                    f"that ends short is a failed attempt and your minimum rises to {higher}. "
                    "y sends, n not.",
                    lambda: self.meld(low_end, confirmed=True),
                )
                return
        elif not confirmed and self._fails_opening(move):
            need = view.initial_minimum(self.snap.side_of(self.me))
            self.confirm = (
                f"Under your opening minimum of {need}: a failed attempt (the cards come "
                "back, the minimum rises). Press y to lay down anyway, n not to.",
                lambda: self.meld(low_end, confirmed=True),
            )
            return
        self._try(move)

    def add(self, meld_index: int | None = None) -> None:
        """Add the selection to one of this side's melds: the one given, or the only one the
        engine accepts it on; with several, ask which."""
        view = self.view
        if view is None:
            return
        slots = tuple(self.selected) or self._cursor_slot()
        if not slots:
            self.say("Select the cards to add first.", "error")
            return
        team = self.snap.side_of(self.me)
        melds = view.melds[team] if team < len(view.melds) else []
        if not melds:
            self.say("Your side has no meld to add to yet.", "error")
            return
        if meld_index is not None:
            self.choosing_meld = None
            self._try(AddToMeld(self.me, meld_index, tuple(sorted(slots))))
            return
        fits = [
            i for i in range(len(melds))
            if view.check(AddToMeld(self.me, i, tuple(sorted(slots)))) is None
        ]
        if len(fits) == 1:
            self._try(AddToMeld(self.me, fits[0], tuple(sorted(slots))))
        elif len(melds) == 1:
            err = view.check(AddToMeld(self.me, 0, tuple(sorted(slots))))
            why = explain(err, view, self.glyphs) if err else "Those cards do not fit that meld."
            self.say(why, "error")
        elif not fits:
            self.say("Those cards fit none of your melds.", "error")
        else:
            self._ask_meld(tuple(sorted(slots)), tuple(i + 1 for i in fits))

    def add_by_number(self, digit: str) -> None:
        """A digit typed at the table: add the selection to the meld of that number, read
        one digit at a time where the side has ten melds or more (`1` may begin `11`)."""
        view = self.view
        slots = tuple(self.selected) or self._cursor_slot()
        team = self.snap.side_of(self.me)
        melds = view.melds[team] if view is not None and team < len(view.melds) else []
        if not slots or not melds:
            self.add()  # says what is missing
            return
        self._ask_meld(tuple(sorted(slots)), tuple(range(1, len(melds) + 1)), quiet=True)
        self.meld_digit(digit)

    def _ask_meld(self, slots: tuple[int, ...], numbers: tuple[int, ...],
                  quiet: bool = False) -> None:  # fmt: skip
        self.choosing_meld = slots
        self.meld_numbers = numbers
        self.meld_typed = ""
        if not quiet:
            self.say(self._meld_question(), "hint")

    def _meld_question(self) -> str:
        offered = ", ".join(str(n) for n in self.meld_numbers)
        if self.meld_typed:
            return (f"Add to which meld? {offered}: {self.meld_typed}_ (another digit, or "
                    f"Enter for meld {self.meld_typed}; Esc: cancel)")  # fmt: skip
        if max(self.meld_numbers) >= 10:
            return f"Add to which meld? {offered} (type its number, Enter; Esc: cancel)"
        return f"Add to which meld? {offered} (Esc: cancel)"

    def meld_digit(self, digit: str) -> None:
        """One digit of the meld's number: chosen as soon as no other meld's number begins
        with what is typed; Enter takes it as it stands (`meld_enter`)."""
        if self.choosing_meld is None:
            return
        typed = (self.meld_typed + digit).lstrip("0")
        words = [str(n) for n in self.meld_numbers]
        if not typed or not any(w.startswith(typed) for w in words):
            self.say(f"No meld {typed or digit} to choose: {self._meld_question()}", "error")
            return
        if typed in words and not any(w != typed and w.startswith(typed) for w in words):
            self.choose_meld(int(typed))
            return
        self.meld_typed = typed
        self.say(self._meld_question(), "hint")

    def meld_enter(self) -> None:
        """Enter while choosing a meld: the number typed so far."""
        if self.choosing_meld is not None and self.meld_typed:
            self.choose_meld(int(self.meld_typed))

    def meld_backspace(self) -> None:
        self.meld_typed = self.meld_typed[:-1]
        if self.choosing_meld is not None:
            self.say(self._meld_question(), "hint")

    def cancel_meld(self) -> None:
        self.choosing_meld = None
        self.meld_typed = ""
        self.message = None

    def choose_meld(self, number: int) -> None:
        if self.choosing_meld is None:
            return
        slots = self.choosing_meld
        self.choosing_meld = None
        self.meld_typed = ""
        self._try(AddToMeld(self.me, number - 1, slots))

    def _cursor_slot(self) -> tuple[int, ...]:
        hand = self.hand()
        return (hand[self.cursor],) if hand else ()

    # ------------------------------------------------------------------ hints

    def _legal(self) -> list[Move]:
        view = self.view
        if view is None or not self.my_turn():
            return []
        if self.hint_version != self.snap.version:
            moves = legal_moves(view)
            # Melds and additions first: they are what a player looks for; discards last.
            moves.sort(key=lambda m: 1 if isinstance(m, Discard) else 0)
            # Two plays that read the same (equal cards in other slots) are one hint.
            seen: set[str] = set()
            self.hints = []
            for m in moves:
                text = suggest(m, view, self.glyphs)
                if text not in seen:
                    seen.add(text)
                    self.hints.append(m)
            self.hint_version = self.snap.version
        return self.hints

    def hint(self, step: int = 1) -> None:
        """Show the next legal play (from the engine) and select its cards; Enter plays it."""
        moves = self._legal()
        view = self.view
        if not moves or view is None:
            self.say("No play to suggest now." if not self.my_turn() else "No legal move.")
            return
        self.hint_at = (self.hint_at + step) % len(moves)
        move = moves[self.hint_at]
        self.selected = list(move_slots(move))
        self.staged, self.staged_ends = [], []
        text = suggest(move, view, self.glyphs)
        self.say(f"hint {self.hint_at + 1}/{len(moves)}: {text}  (Enter: play it?)", "hint")

    def play_hint(self) -> bool:
        """Ask before playing the hint shown (y plays it): a hint is never played by one key."""
        view = self.view
        if self.hint_at < 0 or self.hint_at >= len(self.hints) or view is None:
            return False
        move = self.hints[self.hint_at]
        self.confirm = (f"Play the hint: {suggest(move, view, self.glyphs)}? y plays it, n not.",
                        lambda: self._try(move))  # fmt: skip
        return True

    # ------------------------------------------------------------------ the table's answers

    def sent(self, error: str | None) -> None:
        """The table took the move (None) or refused it with a reason."""
        self.pending = False
        if error is not None:
            self.say(f"The table refused the move: {in_glyphs(error, self.view, self.glyphs)}",
                     "error")  # fmt: skip

    # ------------------------------------------------------------------ panels and chat

    def current_panel(self) -> Panel:
        """The panel on screen: the one opened, else the end of a hand not yet dismissed."""
        if (
            self.panel is Panel.NONE
            and self.snap.hand_over
            and len(self.snap.history) > self.ended_seen
        ):
            return Panel.HAND_END
        return self.panel

    def toggle_panel(self, panel: Panel) -> None:
        self.panel = Panel.NONE if self.panel is panel else panel
        self.panel_page = 0

    def close_panel(self) -> None:
        if self.current_panel() is Panel.HAND_END:
            self.ended_seen = len(self.snap.history)
        self.panel = Panel.NONE

    def ask_agreement(self, action: str) -> None:
        """Ask before agreeing to end, void or replace: each says what it does."""
        snap = self.snap
        prop = snap.proposal
        if prop is not None:
            # Any of E, V, R joins the proposal as it stands: say what that does.
            if prop.named_me:
                self.say(f"{prop.by}'s proposal names you as gone: it is not yours to sign; "
                         "play on")  # fmt: skip
                return
            if prop.blocked:
                self.say(f"You cannot agree yet: {prop.blocked}.")
                return
            what = proposal_text(prop.by, prop.action, prop.silent)
            self.agree_action = action
            self.confirm = (f"Agree: {what}? y agrees, n not.", lambda: None)
            return
        if not snap.timed_out:
            who = ", ".join(snap.waiting)
            limit = f" ({left_text(snap.wait_limit)})" if snap.wait_limit else ""
            now = f"; waiting for {who}" if who else ""
            self.say(f"E, V and R open once the table has waited past its limit{limit} for a "
                     f"player{now}.", "wait")  # fmt: skip
            return
        away = ", ".join(snap.waiting) or "the missing players"
        what = {
            "end": f"End the match now without {away}: the scores stand as they are.",
            "void": f"Void this hand: it is dealt again, no points counted; {away} may return.",
            "replace": f"Seat bots for {away}: the hand is dealt again with the bots in play.",
        }[action]
        self.agree_action = action
        self.confirm = (f"{what} y agrees, n not.", lambda: None)

    def phase(self) -> Phase | None:
        view = self.view
        return None if view is None else view.phase
