"""The ATen coverage table (docs/coverage.md), generated from the code.

    .venv/bin/python -m mlxir.tools.coverage            # print the table
    .venv/bin/python -m mlxir.tools.coverage --write    # update docs/coverage.md

For every ATen overload packet the importer handles (`IMPORTERS`): the `aten` op it
becomes, whether the lowering has a pattern for that op, and how many differential
configurations exercise it, with their dtypes and whether a dynamic-shape variant runs.
A configuration exercises an op when the op appears in the imported IR of its case.
`tests/test_coverage.py` regenerates the table and fails if docs/coverage.md differs,
so the table cannot drift from the registered patterns or the test suite.
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TABLE = ROOT / "docs" / "coverage.md"


def _aten_op_of(packet: str) -> str | None:
    """The aten dialect op an importer entry produces (None for dropped assertions)."""
    from mlxir.conversions.torch_to_aten import COPY_FORMS, IMPORTERS, _dropped, _identity

    handler = IMPORTERS[packet]
    if handler in (_dropped, _identity):
        return None
    aliases = {
        "aten._unsafe_view": "aten.view",
        "aten.t": "aten.transpose",
        "aten.__and__": "aten.bitwise_and",
        "aten.__or__": "aten.bitwise_or",
        "aten.__xor__": "aten.bitwise_xor",
        "aten.hardtanh": "aten.clamp",
        "aten.copy": "aten.expand",
        "aten._softmax": "aten.softmax",
        "aten._log_softmax": "aten.log_softmax",
        "aten.max_pool2d_with_indices": "aten.max_pool2d",
        "aten.native_layer_norm": "aten.layer_norm",
        "aten._native_batch_norm_legit_no_training": "aten.batch_norm",
        "aten.native_group_norm": "aten.group_norm",
        "aten.scatter_add": "aten.scatter_reduce",
        "aten.unbind": "aten.split_with_sizes",
        "dim_order_ops._to_dim_order_copy": "aten._to_copy",
        "dim_order_ops._clone_dim_order": "aten.clone",
    }
    if packet in COPY_FORMS:
        return _aten_op_of(COPY_FORMS[packet])
    return aliases.get(packet, packet)


def lowered_ops() -> set[str]:
    """aten op names some lowering pattern rewrites: typed patterns name their op in
    `@op_type_rewrite_pattern`'s closure; the table-driven ones match a base class."""
    import inspect

    from mlxir.conversions import aten_to_mlx as lowering
    from mlxir.dialects import aten

    table_driven: dict[type, tuple[type, ...]] = {
        lowering.LowerUnary: (aten.UnaryElementwiseOp,),
        lowering.LowerBinary: (aten.BinaryElementwiseOp,),
        lowering.LowerReduction: (aten.ReductionOp,),
        lowering.LowerSplit: (aten.SplitOp, aten.SplitWithSizesOp),
        lowering.LowerNorm: (aten.LayerNormOp, aten.RmsNormOp),
        lowering.LowerCreation: (aten.CreationOp, aten.LikeOp, aten.ScalarTensorOp),
    }
    handled: list[type] = []
    for pattern in lowering.LOWERING_PATTERNS:
        if type(pattern) in table_driven:
            handled.extend(table_driven[type(pattern)])
            continue
        closure = inspect.getclosurevars(type(pattern).match_and_rewrite).nonlocals
        expected = closure.get("expected_type")
        if expected is not None:
            handled.extend(getattr(expected, "__args__", (expected,)))
    return {op.name for op in aten.ATEN_OPS if any(issubclass(op, h) for h in handled)}


def exercised_ops() -> dict[str, list[tuple[str, bool]]]:
    """aten op → the (dtype, dynamic) of every differential configuration using it."""
    sys.path.insert(0, str(ROOT / "tests"))
    import torch
    from torch.export import export

    from differential.cases import CASES  # pyright: ignore[reportMissingImports]
    from differential.harness import (  # pyright: ignore[reportMissingImports]
        EXPORT_SIZE,
        Fn,
        _dynamic_shapes,
        configurations,
    )
    from mlxir.conversions.torch_to_aten import import_program

    ops_of_case: dict[str, set[str]] = {}
    for case in CASES:
        dtype = case.dtypes[0]
        module = Fn(case.fn, case.params(dtype) if case.params else None)
        inputs = case.make(EXPORT_SIZE, dtype)
        # The dynamic variant when there is one: it adds the sym_size/arith ops.
        shapes = _dynamic_shapes(case, len(inputs), case.min_size) if case.dynamic else None
        with torch.no_grad():
            ep = export(module, inputs, dynamic_shapes=(shapes,) if shapes else None)
        imported = import_program(ep)
        ops_of_case[case.name] = {op.name for op in imported.walk() if op.name.startswith("aten.")}
    used: dict[str, list[tuple[str, bool]]] = defaultdict(list)
    for case, dtype, dynamic in configurations(CASES):
        for name in ops_of_case[case.name]:
            used[name].append((str(dtype).removeprefix("torch."), dynamic))
    return used


def table() -> str:
    from mlxir.conversions.torch_to_aten import IMPORTERS

    lowered = lowered_ops()
    used = exercised_ops()
    rows = []
    for packet in sorted(IMPORTERS):
        op = _aten_op_of(packet)
        if op is None:
            continue
        configs = used.get(op, [])
        dtypes = sorted({d for d, _ in configs})
        dynamic = any(dyn for _, dyn in configs)
        rows.append(
            f"| `{packet}` | `{op}` | {'yes' if op in lowered else '**no**'} | {len(configs)} "
            f"| {', '.join(dtypes) or '—'} | {'yes' if dynamic else 'no'} |"
        )
    total = sum(len(v) for v in used.values())
    header = [
        "# ATen coverage",
        "",
        "Generated by `python -m mlxir.tools.coverage --write` from the importer's table,",
        "the lowering patterns and the differential suite; `tests/test_coverage.py` fails",
        "when this file is out of date. A configuration counts for every op in its case's",
        f"imported IR ({total} op-configuration pairs in all).",
        "",
        "| ATen packet | aten op | lowered | configurations | dtypes | dynamic shapes |",
        "|---|---|---|---|---|---|",
    ]
    return "\n".join([*header, *rows]) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--write", action="store_true", help=f"write {TABLE.relative_to(ROOT)}")
    args = parser.parse_args(argv)
    text = table()
    if args.write:
        TABLE.parent.mkdir(exist_ok=True)
        TABLE.write_text(text)
        print(f"wrote {TABLE}")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
