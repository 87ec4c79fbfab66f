"""A preset's rules in plain words, grouped the way a player thinks of a hand: the deal, the
melds, the pots, going out, and the score; every value given, in the wording of docs/rules.md.

Read from the rules' wire form (`RuleSet.to_wire()`), the same values every peer agreed on.
"""

from __future__ import annotations

from collections.abc import Mapping

from buraco_p2p.rules import RuleSet
from buraco_p2p.text.length import how_it_ends

__all__ = ["rules_in_words"]

RANKS = {1: "A", 11: "J", 12: "Q", 13: "K"}


def _ranks(values: object) -> str:
    if not isinstance(values, list | tuple) or not values:
        return "none: runs only"
    return ", ".join(RANKS.get(int(v), str(v)) for v in values)


def _yes(v: object) -> bool:
    return bool(v) and v not in ("false", "False", 0)


def rules_in_words(rules: RuleSet) -> list[tuple[str, list[str]]]:
    """(heading, sentences) for each group of the rules."""
    w: Mapping[str, object] = rules.to_wire()
    players = w["players"]
    deck = int(w["deck_size"])  # type: ignore[call-overload]
    jokers = deck % 52
    deal = [
        f"{players} players; {w['teams']} sides" if players in (4, 6) else f"{players} players, "
        "each on their own",
        f"{deck} cards ({'with ' + str(jokers) + ' jokers' if jokers else 'no jokers'}); "
        f"{w['hand_size']} cards each; {w['pots']} pots of {w['pot_size']} cards",
        {
            "face_up": "one card is turned face up to start the discard pile",
            "first_player_peek": "no pile at the start: the first player sees the top card of "
            "the stock and keeps it, or turns it face up (t) and draws the next",
            "none": "no pile at the start: the first player draws from the stock",
        }.get(str(w["discard_start"]), f"start of the pile: {w['discard_start']}"),
        f"play goes {str(w['play_direction']).replace('_', '-')}; the deal passes "
        f"{str(w['dealer_passes']).replace('_', '-')}",
        "taking the pile takes all of it"
        + (" and its top card must be melded that turn: select the cards that meld it, "
           "then p" if _yes(w["must_meld_top_discard"]) else ""),
    ]
    if not _yes(w["may_discard_lone_taken_card"]):
        deal.append("a pile of one card taken may not be discarded that turn")
    if w.get("cut_22_bonus"):
        deal.append(f"a cut of exactly 22 cards scores {w['cut_22_bonus']}")
    melds = [
        "runs: three or more cards of one suit in sequence; aces "
        + {"low_or_high": "low (A 2 3) or high (Q K A)", "low_only": "low only",
           "high_only": "high only"}.get(str(w["ace"]), str(w["ace"])),
        f"sets of: {_ranks(w['set_ranks'])}"
        + ("; their suits must all differ" if _yes(w["set_suits_differ"]) else "")
        + ("; one set per rank per side" if _yes(w["one_set_per_rank"]) else ""),
        f"wild cards (2s{' and jokers' if jokers else ''}): at most {w['max_wilds']} per meld"
        + ("; in a run at either end" if w["wild_end"] == "either" else "; at the high end"),
    ]
    opening = int(w["initial_meld_min"])  # type: ignore[call-overload]
    vul = int(w["initial_meld_min_vulnerable"])  # type: ignore[call-overload]
    if opening or vul:
        counts = ("all melds laid down in the opening turn count together"
                  if w["initial_meld_counts"] == "turn" else "one meld must reach it alone")
        vfrom = w["vulnerable_from"]
        vtext = "half the target" if vfrom == "half_target" else f"{vfrom} points"
        melds.append(f"to open, a side lays down at least {opening} points ({vul} once its "
                     f"score reaches {vtext}); {counts}")
        step = w["initial_meld_failed_step"]
        if step:
            melds.append(f"a turn that ends under the minimum is a failed attempt: the cards "
                         f"go back to the hand (marked oo meanwhile) and the minimum rises by "
                         f"{step}")
    else:
        melds.append("no minimum to open")
    long_bonus = w.get("clean_run_length_bonus") or []
    pots = [
        "the first player of a side to empty their hand takes a pot and plays on with it"
        + (" (in flight, at once, if they have not discarded yet)"
           if _yes(w["pot_in_flight"]) else ""),
        {
            "pot_becomes_stock": "when the stock runs out, the next pot becomes the stock; "
            "with none left, the hand ends",
            "hand_ends": "when the stock runs out, the hand ends after that turn",
        }.get(str(w["stock_out"]), f"when the stock runs out: {w['stock_out']}"),
    ]
    going_out = [
        f"a buraco is a meld of {w['buraco_length']} cards or more"
        + (" (a run)" if w["buraco_shape"] == "run" else " (a run or a set)")
        + f"; clean (no wild) {w['bonus_clean']}, dirty {w['bonus_dirty']}",
        "to go out a side needs "
        + ("its pot and " if _yes(w["going_out_needs_pot"]) else "")
        + ("a clean buraco" if w["going_out"] == "clean_buraco" else "a buraco")
        + f"; going out scores {w['going_out_bonus']}",
    ]
    if isinstance(long_bonus, list | tuple) and long_bonus:
        going_out.append("long clean runs instead: " + ", ".join(
            f"{a} cards {b}" for a, b in long_bonus))
    if _yes(w["go_out_by_discard_only"]):
        going_out.append("a player goes out only by discarding the last card")
    if not _yes(w["discard_wild_to_go_out"]):
        going_out.append("a wild card may not be the last discard")
    scoring = [
        f"card points: joker {w['points_joker']}, 2 {w['points_deuce']}, A {w['points_ace']}, "
        f"8 to K {w['points_8_to_k']}, 3 to 7 {w['points_3_to_7']}",
        "cards left in a hand count against their side",
        f"a side that never took its pot loses {w['no_pot_penalty']}",
        {
            "penalty": f"a pot taken but not played costs {w['pot_unplayed_penalty']}",
            "count": "a pot taken but not played counts as cards left in hand",
            "penalty_and_count": f"a pot taken but not played costs "
            f"{w['pot_unplayed_penalty']} and counts as cards left in hand",
        }.get(str(w["pot_unplayed"]), f"a pot not played: {w['pot_unplayed']}"),
        how_it_ends(rules),
    ]
    return [("Dealing", deal), ("Melds", melds), ("Pots and the stock", pots),
            ("Buracos and going out", going_out), ("Scoring", scoring)]
