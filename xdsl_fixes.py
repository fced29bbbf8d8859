"""Fixes to the xDSL version mlxir pins, applied where mlxir parses text
(`mlx-opt`, `mlxir.tools.mlx_opt.make_context`, attributes stored as text in a
`.mlxfb` program). Each is idempotent and says what upstream xDSL gets wrong.
"""

from __future__ import annotations

import re

STRING_LITERAL = re.compile(r'"(?:[^"\\\n\v\f]|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*"')
"""The lexer's string literal without the nested quantifier of xDSL 0.75's
`"(?:[^"...]+|\\...)*"`, which backtracks exponentially on an unterminated string:
`"` followed by 40 characters and no closing quote takes hours to reject. Same
language; every character has one way to match, so rejecting is linear."""


def apply() -> None:
    """Applies every fix (cheap; safe to call again)."""
    from xdsl.utils.mlir_lexer import MLIRLexer

    MLIRLexer._unescaped_characters_regex = STRING_LITERAL  # type: ignore[attr-defined]
