"""mlxir's one cache folder: `$MLXIR_CACHE_DIR`, else `$XDG_CACHE_HOME/mlxir`, else
`~/.cache/mlxir`; `MLXIR_CACHE_DIR=none` (or empty, `off`, `0`) keeps no cache. It holds
the verdicts of verified programs (`verified/`, `codegen/verification.py`) and the LLM
programs compiled from `save_pretrained` folders (`llm/`, `tools/llm/compile.py`)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

CACHE_VARIABLE = "MLXIR_CACHE_DIR"

_RETIRED = "MLXIR_CACHE"
"""The LLM cache's own variable before there was one for both (read no more)."""


def cache_root() -> Path | None:
    """The cache folder (None: no cache)."""
    if os.environ.get(_RETIRED) and not os.environ.get(CACHE_VARIABLE):
        print(
            f"mlxir: warning: {_RETIRED} is no longer read; set {CACHE_VARIABLE} (the one cache folder)",
            file=sys.stderr,
        )
    configured = os.environ.get(CACHE_VARIABLE)
    if configured is not None:
        return None if configured.strip().lower() in ("", "none", "off", "0") else Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "mlxir"
