"""The lobby screen: invite, seats with fingerprints and links, the join prompt, rules, chat.

From the top: a title bar; the invite code as plain text (wrapped, no decoration inside it, so
a mouse selection copies it whole; the lobby turns the mouse off so the terminal selects) and
the file it is also written to; with `--internet`/`--upnp`/`--stun`, the host's addresses with
how each was learnt and its port mapping's state in words, or the joiner's reply code to copy
and why the host needs it; the seats, each with its nickname, the identity fingerprint to
compare by voice, "bot" for the bot peers this host started (on a joiner: the seats the host's
`bots` message named), ready or not, and how our link to it was made (`Mesh.how_linked`); the
rules; the join request waiting for the host, loud, with its countdown; then the lobby's
notices and chat, newest last, the line being typed (a chat line, a rule, or the host's
pasted reply code, with what it is for) and the keys.
"""

from __future__ import annotations

from buraco_p2p.net.table.appmessages import printable
from buraco_p2p.ui import canvas as cv
from buraco_p2p.ui.canvas import Row
from buraco_p2p.ui.lobby_model import LobbyModel, Typing

__all__ = ["lobby_rows"]

MIN_COLS, MIN_ROWS = 60, 16
REPLY_WHY = ("why: the host is behind a NAT and has no port mapping, so it cannot be dialed; "
             "once it pastes this code, you both dial at once and the NATs let the link through")
REPLY_INPUT = "paste the reply code a joiner sent (BRR-...): it lets them through your NAT"


def _wrap(text: str, cols: int, sep: str = "-") -> list[str]:
    """`text` in lines of at most `cols`, broken after a `sep` where it can be (an invite
    code read back with its line breaks is the same code: whitespace is ignored)."""
    lines: list[str] = []
    while len(text) > cols:
        cut = text.rfind(sep, 0, cols) + 1 or cols
        lines.append(text[:cut])
        text = text[cut:]
    return [*lines, text]


def _countdown(left: float) -> str:
    s = max(0, int(left + 0.999))
    return f"{s // 60}:{s % 60:02d}"


def _seat_rows(m: LobbyModel, cols: int) -> list[Row]:
    mesh = m.mesh
    roster = mesh.roster if mesh is not None else None
    if mesh is None or roster is None:
        return [cv.fit([("class:dim", f"  {m.status}")], cols)]
    lobby = m.lobby
    ready = lobby.ready if lobby is not None else set()
    by_seat = {mem.seat: mem for mem in roster.members}
    head = f" Seats {len(roster.members)}/{roster.seats}"
    rows = [cv.fit([("class:sidehead", head)], cols)]
    names: dict[int, str] = {}
    for seat, member in by_seat.items():
        tags = []
        if member.key == mesh.me:
            tags.append("you")
        if member.key == roster.host.key:
            tags.append("host")
        if member.key.raw in m.bots:
            tags.append("bot")
        nick = printable(member.nickname, 20)
        names[seat] = nick + (f" ({', '.join(tags)})" if tags else "")
    # as wide as the longest name (so the link's words fit at 80 columns), at most 28
    width = min(28, max((len(n) for n in names.values()), default=0) + 2)
    for seat in range(roster.seats):
        mem = by_seat.get(seat)
        if mem is None:
            rows.append(cv.fit([("class:dim", f"  {seat + 1} (empty)")], cols))
            continue
        me = mem.key == mesh.me
        state: Row
        if me:
            state = []
        elif not mesh.is_up(mem.key):
            state = [("class:error", " [offline]")]
        else:
            state = [("class:dim", f" {mesh.how_linked(mem.key) or ''}")]
        is_ready = mem.key.raw in ready
        rows.append(
            cv.fit(
                [
                    ("class:name", f"  {seat + 1} {names[seat]:<{width}}"),
                    ("class:good", "ready  ") if is_ready else ("class:dim", "waiting"),
                    ("", f"  {mem.key.fingerprint()}"),
                    *state,
                ],
                cols,
            )
        )
    return rows


def _labelled(label: str, text: str, cols: int, most: int = 2) -> list[Row]:
    """`text` after `label`, wrapped at spaces under itself in at most `most` rows."""
    pad = " " * len(label)
    lines = _wrap(text, cols - len(label), " ")[:most]
    return [cv.fit([("class:label", label if i == 0 else pad), ("", line)], cols)
            for i, line in enumerate(lines)]  # fmt: skip


def _reach_rows(m: LobbyModel, cols: int, most: int = 0) -> list[Row]:
    """`--internet`/`--upnp`/`--stun`: the host's addresses with how each was learnt and the
    port mapping's state (`most` rows each where given); a joiner's reply code to copy (always
    whole), and why the host needs it."""
    if not m.reaching:
        return []
    rows: list[Row] = []
    if m.is_host and m.addresses:
        shown = " · ".join(f"{ep} {word}" for ep, word in m.addresses)
        rows += _labelled(" Addresses ", shown, cols, most or 2)
    if m.is_host and m.mapping:
        rows += _labelled(" Port mapping ", m.mapping, cols, most or 3)
    if not m.is_host and m.reply_code and m.lobby is None:
        rows.append(cv.fit([("class:label", " Reply code"),
                            ("class:dim", " for the host to paste (select it with the mouse)")],
                           cols))  # fmt: skip
        rows += [cv.fit([("", " " + line)], cols) for line in _wrap(m.reply_code, cols - 1)]
        rows += [cv.fit([("class:dim", " " + line)], cols)
                 for line in _wrap(REPLY_WHY, cols - 2, " ")]  # fmt: skip
    return rows


def _prompt_rows(m: LobbyModel, cols: int, now: float) -> list[Row]:
    lobby = m.lobby
    req = lobby.request if lobby is not None else None
    if req is None:
        return []
    deadline = m.deadline()
    left = f"  expires in {_countdown(deadline - now)}" if deadline is not None else ""
    loud = "class:confirm"
    return [
        cv.fit([(loud, f" Join request #{req.number}: {printable(req.nickname, 30)}")], cols),
        cv.fit([(loud, f"   fingerprint {req.key.fingerprint()}  (compare it by voice)")], cols),
        cv.fit([(loud, " Seat them? press y or n"), ("class:dim", left)], cols),
    ]


def _keys_row(m: LobbyModel, cols: int) -> Row:
    if m.typing is Typing.CHAT:
        return cv.fit([("class:chatinput", f" say> {m.text}_")], cols)
    if m.typing is Typing.RULE:
        return cv.fit([("class:chatinput", f" rule KEY=VALUE (empty clears)> {m.text}_")], cols)
    if m.typing is Typing.REPLY:
        head = " reply code (Enter sends, Esc cancels)> "
        room = max(8, cols - len(head) - 2)
        return cv.fit([("class:chatinput", f"{head}{m.text[-room:]}_")], cols)
    keys = " r ready · c chat · "
    if m.is_host:
        keys += "p preset · o rule · k kick · "
        if m.reaching:
            keys += "v reply code · "
    keys += "q quit"
    return cv.fit([("class:keys", keys)], cols, "class:keys")


def _top_rows(m: LobbyModel, cols: int, *, compact: bool) -> list[Row]:
    """Title, invite, reach, seats and rules; `compact` keeps each reach row to one row (a
    tall invite with six seats at 80x24)."""
    role = "host" if m.is_host else "join"
    me = f" you: {printable(m.nickname, 20)} {m.fingerprint} "
    title = [("class:title", f" buraco-p2p · lobby · {role}")]
    top: list[Row] = [cv.spread(title, [("class:title", me)], cols, "class:title")]
    if m.invite:
        where = " (select it with the mouse; also in the file below)" if m.invite_file else ""
        top.append(cv.fit([("class:label", " Invite code"), ("class:dim", where)], cols))
        top += [cv.fit([("", " " + line)], cols) for line in _wrap(m.invite, cols - 1)]
        if m.invite_file is not None:
            path = _wrap(str(m.invite_file), cols - 6, "/")
            top += [cv.fit([("class:dim", " file " if i == 0 else "      "), ("", line)], cols)
                    for i, line in enumerate(path)]  # fmt: skip
        if m.short:
            top.append(cv.fit([("class:label", " Short code "), ("", m.short)], cols))
    elif m.host_fingerprint:
        top.append(cv.fit([("", f" Host fingerprint {m.host_fingerprint}")], cols))
    top += _reach_rows(m, cols, 1 if compact else 0)
    top += _seat_rows(m, cols)
    rules = m.rules_text() if m.rules is not None else ""
    note = ("class:dim", f"  {m.rules_note}" if m.rules_note else "")
    top.append(cv.fit([("class:label", " Rules "), ("", rules), note], cols))
    return top


def lobby_rows(m: LobbyModel, cols: int, rows: int, now: float) -> list[Row]:
    """The lobby at `cols` x `rows`; `now` on `time.monotonic()` for the countdown."""
    if cols < MIN_COLS or rows < MIN_ROWS:
        msg = f"The lobby needs {MIN_COLS}x{MIN_ROWS}; this terminal is {cols}x{rows}."
        out = [cv.fit([], cols) for _ in range(rows)]
        out[rows // 2] = cv.fit([("", msg)], cols)
        return out
    top = _top_rows(m, cols, compact=False)
    prompt = _prompt_rows(m, cols, now)
    bottom: list[Row] = []
    if m.typing is Typing.REPLY:
        bottom.append(cv.fit([("class:dim", " " + REPLY_INPUT)], cols))
    if m.notice:
        bottom.append(cv.fit([("class:error", f" {m.notice}")], cols))
    bottom.append(_keys_row(m, cols))
    room = rows - len(top) - len(prompt) - len(bottom)
    if room < 0:  # the reach rows one each: the seats stay in view
        top = _top_rows(m, cols, compact=True)
        room = rows - len(top) - len(prompt) - len(bottom)
    if room < 0:  # a narrow terminal wraps the invite long: keep the prompt and keys
        top = top[: max(0, len(top) + room)]
        room = 0
    # Long lines wrap (at spaces) rather than lose their end ("Seat them? [y/n]").
    wrapped = [part for line in m.log[-room:] if room
               for part in _wrap(printable(line, 400), cols - 2, " ")]  # fmt: skip
    shown = wrapped[-room:] if room else []
    log = [cv.fit([("", " " + line)], cols) for line in shown]
    log = [cv.fit([], cols) for _ in range(room - len(log))] + log
    return top + prompt + log + bottom
