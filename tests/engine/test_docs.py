"""The usage examples in the engine's package docstring run as written."""

from __future__ import annotations

import contextlib
import io
import re
import textwrap

import buraco_p2p.engine as engine


def test_package_docstring_examples_run() -> None:
    doc = engine.__doc__ or ""
    blocks = re.findall(r"::\n\n((?:    .*\n|\n)+)", doc)
    assert len(blocks) >= 2
    for block in blocks:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(textwrap.dedent(block), {})
        assert out.getvalue().strip()
