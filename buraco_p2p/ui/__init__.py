"""The full-screen terminal client (prompt_toolkit, with trio in guest mode).

The client renders what a table shows this seat and sends what the player intends; it holds
no game rule (legality, hints and previews come from the engine). Its input is a `TableFeed`
(`buraco_p2p.ui.feed`): snapshots of the table (`TableSnapshot`: this seat's `PlayerView`,
seats and sides, scores, fairness status, progress, results, chat) and intents
(`submit(move)`, `say(text)`, `ready()`, `save_log(path)`). `PracticeTable` is a feed over the
engine's in-process `LocalTable` with heuristic bots in the other seats; a networked session
provides the same interface.

- `TableApp(feed, ascii=..., colour=...)`: the application; `await app.run()` on asyncio.
- `run_client(feed, ...)`: run it in the terminal (blocking); `render(client, cols, rows, now)`
  builds a screen as rows of styled text, for tests and benchmarks.
- `Client`: the player's state (cursor, selection, panels) and intents; `keys.press` maps keys.
- `buraco_p2p.ui.command`: the `play` subcommand; `TableApp(feed, lobby=model)` shows a lobby
  first and switches to the table when the model says the match has started.

Networked tables: `driver_feed` (a feed over a running session driver: snapshots, shuffle and
deal progress, each peer's link), `told` (the screen's one clock: moves, news and results told
in the log's order), `proposals` (another party's agreement to answer), `session_feed` (you
and bot peer processes), `netplay` (`host`, `join` and `resume`: the lobby, then the table, in
one application), `lobby_model` and `lobby_screen` (the lobby's state, keys and screen over
`net.mesh.lobby.Lobby`).

Modules: `feed` (the interface), `practice` (the practice table), `client` and `keys` (intents),
`app` (prompt_toolkit and trio), `table_screen` with `meld_rows` and `hand_rows` (the table),
`panels` (help, rules, pile, history, hand end, chat, progress, too small), `seating` (who sits
where for N seats), `names`, `theme` (cards, colours; their words and glyphs are
`buraco_p2p.text`), `canvas` (rows of exact width).
"""

from buraco_p2p.ui.app import TableApp, render, run_client
from buraco_p2p.ui.client import Client, Panel
from buraco_p2p.ui.feed import (
    Action,
    ChatLine,
    Complaint,
    Fairness,
    MoveRefused,
    Progress,
    SaveUnavailable,
    SeatInfo,
    TableFeed,
    TableSnapshot,
)
from buraco_p2p.ui.practice import PracticeTable

__all__ = [
    "Action",
    "ChatLine",
    "Client",
    "Complaint",
    "Fairness",
    "MoveRefused",
    "Panel",
    "PracticeTable",
    "Progress",
    "SaveUnavailable",
    "SeatInfo",
    "TableApp",
    "TableFeed",
    "TableSnapshot",
    "render",
    "run_client",
]
