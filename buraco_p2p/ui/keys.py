"""What each key does, as one function of the client's state: `press(client, key)`.

Keys are prompt_toolkit key names (`left`, `tab`, `s-tab`, `enter`, `escape`, `c-c`) or the
character typed. Most keys change the `Client` directly; the few that reach outside it (quit,
the next hand, saving the log, suspending, sending a chat line) come back as an `Outcome` for
the application to carry out.
"""

from __future__ import annotations

from enum import Enum

from buraco_p2p.ui.client import Client, Panel


class Outcome(Enum):
    NONE = "none"
    QUIT = "quit"
    READY = "ready"  # the player has seen the end of the hand
    SAVE = "save"
    SUSPEND = "suspend"
    CHAT = "chat"  # a chat line is ready in `client.chat_sent`
    AGREE = "agree"  # agree to `client.agree_action` (end, void, replace) after a timeout
    SKIP = "skip"  # show the table as it is now, without pausing between others' moves


AGREEMENTS = {"E": "end", "V": "void", "R": "replace"}

PANEL_KEYS = {"?": Panel.HELP, "f1": Panel.HELP, "r": Panel.RULES, "v": Panel.PILE,
              "h": Panel.HISTORY}


def press(c: Client, key: str) -> Outcome:
    """Carry out one key press."""
    if key == "c-z":
        return Outcome.SUSPEND
    if c.chat_text is not None:
        return _chat_key(c, key)
    if c.confirm is not None:
        question, action = c.confirm
        if key in ("y", "Y"):
            c.confirm = None
            if question.startswith("Quit"):  # the match, or before its final signatures
                return Outcome.QUIT
            if c.agree_action:
                return Outcome.AGREE
            action()
        elif key in ("n", "N", "escape") or key.startswith("c-"):
            c.confirm = None
            c.agree_action = ""
            c.message = None
        return Outcome.NONE
    if key in ("q", "c-c"):
        if c.snap.match_over and c.snap.signed:
            return Outcome.QUIT
        if c.snap.match_over:  # the final scores are being signed: the others need ours
            c.confirm = ("Quit before the final scores are signed? The others wait for yours. "
                         "y quits, n waits.", lambda: None)  # fmt: skip
            return Outcome.NONE
        c.confirm = ("Quit the match? y quits, n plays on.", lambda: None)
        return Outcome.NONE
    panel = c.current_panel()
    if panel is Panel.HAND_END:
        return _hand_end_key(c, key)
    paged = (panel is Panel.RULES and key == "r") or (panel is Panel.HELP and key in ("?", "f1"))
    if paged and c.panel_page + 1 < c.rule_pages:
        c.panel_page += 1
        return Outcome.NONE
    if panel is Panel.CHAT and key in ("up", "down", "pageup", "pagedown"):
        step = {"up": 1, "down": -1, "pageup": 10, "pagedown": -10}[key]
        c.panel_page = max(0, c.panel_page + step)
        return Outcome.NONE
    if panel is not Panel.NONE:
        if key in ("escape", "enter") or PANEL_KEYS.get(key) is panel or (
            key == "c" and panel is Panel.CHAT
        ):
            if key == "c" and panel is Panel.CHAT:
                c.chat_text = ""
            c.close_panel()
        return Outcome.NONE
    if c.choosing_meld is not None:
        if key.isdigit():
            c.meld_digit(key)
        elif key == "enter":
            c.meld_enter()
        elif key in ("backspace", "c-h"):
            c.meld_backspace()
        elif key == "escape":
            c.cancel_meld()
        return Outcome.NONE
    return _table_key(c, key)


def _table_key(c: Client, key: str) -> Outcome:
    if key in PANEL_KEYS:
        c.toggle_panel(PANEL_KEYS[key])
        return Outcome.NONE
    actions = {
        "left": lambda: c.move_cursor(-1),
        "right": lambda: c.move_cursor(1),
        "home": lambda: c.cursor_to(0),
        "end": lambda: c.cursor_to(len(c.hand()) - 1),
        " ": c.toggle,
        "u": c.undo,
        "escape": c.clear,
        "d": c.draw,
        "p": c.take_pile,
        "t": c.turn_up,
        "m": c.meld,
        "M": lambda: c.meld(low_end=True),
        "g": c.stage,
        "a": c.add,
        "x": c.discard,
        "tab": c.hint,
        "s-tab": lambda: c.hint(-1),
        "s": c.sort_toggle,
    }
    if key in actions:
        actions[key]()
        return Outcome.NONE
    if key == "enter":
        if not c.play_hint():
            c.say("Nothing to play: Tab shows a hint, ? lists the keys.")
        return Outcome.NONE
    if key == "c":
        c.chat_text = ""
        return Outcome.NONE
    if key == "C":
        c.toggle_panel(Panel.CHAT)
        return Outcome.NONE
    if key == "f":
        return Outcome.SKIP
    if key in AGREEMENTS:
        c.ask_agreement(AGREEMENTS[key])
        return Outcome.NONE
    if key.isdigit() and key != "0":
        c.add_by_number(key)
        return Outcome.NONE
    if len(key) == 1 and key.isprintable():
        c.say(f"{key!r} does nothing here: ? lists the keys.")
    return Outcome.NONE


def _hand_end_key(c: Client, key: str) -> Outcome:
    if key in ("h",):
        c.toggle_panel(Panel.HISTORY)
        return Outcome.NONE
    if key == "C":
        c.toggle_panel(Panel.CHAT)
        return Outcome.NONE
    if c.snap.match_over:
        if key == "s" and c.snap.can_save_log:
            return Outcome.SAVE
        return Outcome.NONE
    if key == "enter":  # Enter alone: Esc, space or x typed in a hurry must not skip it
        c.close_panel()
        return Outcome.READY
    return Outcome.NONE


def _chat_key(c: Client, key: str) -> Outcome:
    text = c.chat_text or ""
    if key == "escape" or key == "c-c":
        c.chat_text = None
        return Outcome.NONE
    if key == "enter":
        c.chat_text = None
        c.chat_sent = text
        return Outcome.CHAT if text.strip() else Outcome.NONE
    if key in ("backspace", "c-h"):
        c.chat_text = text[:-1]
        return Outcome.NONE
    if len(key) == 1 and key.isprintable() and len(text) < 200:
        c.chat_text = text + key
    return Outcome.NONE
