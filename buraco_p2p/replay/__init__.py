"""`buraco-p2p replay LOG`: a finished match watched again, every hand face up, move by move.

Once a hand's keys are opened at its end (docs/protocol.md 4.4 step 6), its log holds every
card: the deal each player really got, the stock's order, the pots. This package turns a log
that `verify` has checked into what a screen or a text shows, and nothing here draws:

- `record`: the log walked, entry by entry, through the same `Table` a peer and `verify` use
  (`Walker`), into one `HandRecord` per deal; only entries `verify` has settled good.
- `checking`: `verify` itself (`audit.verify_bytes`, its proofs on `--jobs` processes) in a
  child process, telling how far the log is settled good and then its verdict.
- `telling`: a deal told again from one seat's point of view or face up, move by move, by the
  engine and the table's own narrator, so the feed reads as it did at that seat's table.
- `timeline`: the frames to step through (each deal, each move, each hand's end, the end),
  growing as the log is settled; moving by a move, a turn or a hand.
- `story`: the score's story, each side's totals hand by hand as bars.
- `line`: `--line`, the match as plain text; `command`: the subcommand. The full screen is
  `buraco_p2p.ui.replay_app`, handed in by `buraco_p2p.cli`.
"""
