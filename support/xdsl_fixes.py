"""Fixes to the xDSL version mlxir pins, applied where mlxir parses or prints text
(`mlxir.dialects.context.make_context`, hence `mlx-opt`; attributes stored as text in a
`.mlxfb` program; the dialects, when imported). Each is idempotent and says what
upstream xDSL gets wrong.
"""

from __future__ import annotations

import re
from typing import Any

STRING_LITERAL = re.compile(r'"(?:[^"\\\n\v\f]++|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*+"')
"""The lexer's string literal without the backtracking of xDSL 0.75's
`"(?:[^"...]+|\\...)*"`, which is exponential on an unterminated string: `"`
followed by 40 characters and no closing quote takes hours to reject. Same language;
the possessive quantifiers never give back what they matched, so rejecting is linear,
and a weight's hex literal (`dense<"0x...">`, megabytes long) lexes in runs rather
than a character at a time (4 MB: 0.1 s instead of 2.6 s)."""

HEX_THRESHOLD = 100
"""Beyond this many elements xDSL prints a dense value as hex, as MLIR does."""


def _print_dense_without_type(self: Any, printer: Any) -> None:
    """xDSL 0.75 decodes every element of a dense value into a Python tuple (and again
    to test for a splat) before it decides to print hex: a weight of 10^6 elements
    takes 0.4 s to print. Here a large value is printed from its bytes directly."""
    raw = self.data.data
    if not isinstance(raw, bytes):  # a weight held by reference (`mlxir.weights`)
        raw = bytes(raw)
    element = self.get_element_type()
    size = element.compile_time_size
    count = len(raw) // size if size else 0
    if count <= HEX_THRESHOLD or not self.shape_is_complete:
        _ORIGINAL_PRINT[0](self, printer)
        return
    printer.print_string("dense")
    with printer.in_angle_brackets():
        first = raw[:size]
        if raw == first * count:
            self._print_one_elem(element.unpack(first, 1)[0], printer)
        else:
            printer.print_string(f'"0x{raw.hex().upper()}"')


_ORIGINAL_PRINT: list[Any] = []


def apply() -> None:
    """Applies every fix (cheap; safe to call again)."""
    from xdsl.dialects.builtin import DenseIntOrFPElementsAttr
    from xdsl.utils.mlir_lexer import MLIRLexer

    MLIRLexer._unescaped_characters_regex = STRING_LITERAL  # pyright: ignore[reportPrivateUsage] (the fix replaces xDSL's private regex: there is no public hook)
    if not _ORIGINAL_PRINT:
        _ORIGINAL_PRINT.append(DenseIntOrFPElementsAttr.print_without_type)
        DenseIntOrFPElementsAttr.print_without_type = _print_dense_without_type
