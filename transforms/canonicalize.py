"""`canonicalize`: xDSL's canonicalization, with the patterns of mlxir's ops attached.

The mlx dialect's ops carry `MlxCanonicalization`, which reads their patterns from
`dialects/mlx.py`'s `CANONICALIZATION_PATTERNS`: the dialects name no transform.
Importing this module fills that table from the catalog (`transforms/catalog.py`), so
the pass finds every pattern whoever runs it; asked for its patterns before, an mlx op
raises rather than canonicalize with none.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.transforms import canonicalize

from mlxir.dialects.mlx import CANONICALIZATION_PATTERNS
from mlxir.transforms.catalog import CANONICALIZE
from mlxir.transforms.pattern_passes import patterns_by_op

CANONICALIZATION_PATTERNS.update(patterns_by_op(CANONICALIZE))


@dataclass(frozen=True)
class CanonicalizePass(canonicalize.CanonicalizePass):
    """Applies every op's canonicalization patterns, and folds, until nothing changes."""

    name = "canonicalize"
