"""The table in words, for every client: card glyphs, refusals explained, moves narrated.

The full-screen client (`buraco_p2p.ui`), the line client (`buraco_p2p.play.console`,
`play.line`) and practice tell a hand with the same words, so those words live below both:
`glyphs` (how a card is drawn, with suit symbols or `--ascii` letters), `words` (moves and
refusals in a player's terms) and `narration` (each applied move, read from the engine's
public state, as feed lines). Pure: text in, text out; no terminal, no I/O.
"""
