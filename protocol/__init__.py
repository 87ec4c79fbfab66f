"""The language-neutral protocol artefacts: `vectors/` (JSON test vectors) and `gen/`, the
generators that derive them from fixed seeds. Not part of the runtime package: a client needs
docs/protocol.md and the vector files, never this code."""
