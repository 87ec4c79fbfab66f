"""docs/protocol.md 4.3 is drawn from the session's transition table, so it cannot drift."""

from __future__ import annotations

from buraco_p2p.session.states import TRANSITIONS
from protocol.gen import table_diagram


def test_the_spec_holds_the_diagram_of_the_transition_table() -> None:
    text = table_diagram.DOC.read_text(encoding="utf-8")
    assert table_diagram.splice(text, table_diagram.render()) == text
    assert table_diagram.main([]) == 0


def test_the_diagram_shows_every_phase_and_transition() -> None:
    drawn = table_diagram.render()
    for phase, rule in TRANSITIONS.items():
        for nxt in rule.then:
            assert f"    {phase.value} --> {nxt.value}: {rule.kind} " in drawn
    assert "void --> closed" in drawn


def test_a_changed_document_is_reported() -> None:
    text = table_diagram.DOC.read_text(encoding="utf-8")
    stale = table_diagram.splice(text, "```mermaid\nstateDiagram-v2\n```\n")
    assert stale != text
    assert table_diagram.splice(stale, table_diagram.render()) == text
