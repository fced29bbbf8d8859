"""The ATen coverage table (docs/coverage.md), generated from the code.

    .venv/bin/python -m mlxir.tools.coverage            # print the table
    .venv/bin/python -m mlxir.tools.coverage --write    # update docs/coverage.md

For every ATen overload packet the importer handles (`IMPORTERS`): the `aten` op it
becomes, whether the lowering has a pattern for that op, and how many differential
configurations exercise it, with their dtypes and whether a dynamic-shape variant runs.
A configuration exercises a packet when the graph the importer receives calls it (after
torch's decompositions, unless the case imports undecomposed); the last column counts
the configurations whose exported graph calls it before any decomposition.
`--write` also records each differential case's packets (`tests/differential/coverage.json`),
as its coverage configuration's export and import give them. That configuration's own
differential test checks its record against what it exported and imported, and
`tests/test_coverage.py` that the table renders from the records and the registered
patterns, so the table cannot drift from either, and no case is exported twice.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

ROOT = Path(__file__).resolve().parent.parent
TABLE = ROOT / "docs" / "coverage.md"


def _aten_op_of(packet: str) -> str | None:
    """The aten dialect op an importer entry produces (None for dropped assertions)."""
    from mlxir.conversions.torch_to_aten import COPY_FORMS, IMPORTERS, dropped, identity

    handler = IMPORTERS[packet]
    if handler in (dropped, identity):
        return None
    aliases: dict[str, str | None] = {
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
        "aten.max_pool3d_with_indices": "aten.max_pool3d",
        "aten.native_layer_norm": "aten.layer_norm",
        "aten._native_batch_norm_legit_no_training": "aten.batch_norm",
        "aten.native_group_norm": "aten.group_norm",
        "aten.scatter_add": "aten.scatter_reduce",
        "torchao.dequantize_affine": "aten.dequantize_affine",
        "aten.unbind": "aten.split_with_sizes",
        "aten.masked_select": "aten.index",  # indexed by aten.nonzero's columns
        "aten._unique2": "aten.unique",
        "aten.unique_consecutive": "aten.unique",
        "aten._local_scalar_dense": "aten.item",  # a float's stays its 0-d tensor
        "aten.__lshift__": "aten.bitwise_left_shift",
        "aten.__rshift__": "aten.bitwise_right_shift",
        "aten.empty": "aten.zeros",
        "aten.instance_norm": "aten.group_norm",  # batch_norm with running stats
        "aten._native_batch_norm_legit": "aten.batch_norm",
        # training mode: batch norm by the batch's statistics, with var and arithmetic
        "aten._native_batch_norm_legit_functional": "aten.batch_norm",
        "aten._batch_norm_with_update_functional": "aten.batch_norm",
        "aten.var_mean": "aten.var",  # with aten.mean
        "aten.std_mean": "aten.std",
        "aten.max": "aten.amax",  # with argmax for `.dim`, or maximum for `.other`
        "aten.min": "aten.amin",
        "dim_order_ops._to_dim_order_copy": "aten._to_copy",
        "dim_order_ops._clone_dim_order": "aten.clone",
        "aten.to": "aten._to_copy",
        "aten.type_as": "aten._to_copy",
        "aten.dropout": None,  # the identity (inference) or refused
        "aten.pad": "aten.constant_pad_nd",  # its constant mode; the others decompose
        "aten.linalg_inv_ex": "aten.linalg_inv",  # info: zeros (docs/semantics.md §5)
        "aten._linalg_det": "aten.linalg_det",
        "aten._linalg_slogdet": "aten.linalg_slogdet",
        "aten._linalg_solve_ex": "aten.linalg_solve",
        "aten._linalg_check_errors": None,  # kept by MLX's own kernels, or refused
        "aten._linalg_svd": "aten.linalg_svdvals",  # U, Vh refused (docs/semantics.md §5)
        "aten._linalg_eigh": "aten.linalg_eigvalsh",  # eigenvectors refused
        "aten.sym_numel": "aten.sym_size",  # with arith.muli
        "aten.sym_storage_offset": None,  # 0, read only by dropped assertions
        **dict.fromkeys(("aten.conj", "aten._conj", "aten._conj_physical"), "aten.conj_physical"),
        "aten.resolve_conj": "aten.clone",
        "aten._fft_r2c": "aten.fft_r2c",
        "aten._fft_c2c": "aten.fft_c2c",
        "aten._fft_c2r": "aten.fft_c2r",
        "aten.empty_permuted": "aten.zeros",
        "aten.empty_strided": "aten.zeros",
        "aten.new_empty_strided": "aten.zeros",
        # the samplers (docs/semantics.md §6)
        **dict.fromkeys(("aten.rand", "aten.randn", "aten.randint", "aten.normal"), "aten.random"),
        **dict.fromkeys(
            (
                "aten.rand_like", "aten.randn_like", "aten.randint_like", "aten.uniform", "aten.normal_functional",
                "aten.log_normal", "aten.exponential", "aten.cauchy", "aten.geometric", "aten.bernoulli",
            ),
            "aten.random_like",
        ),
    }
    if packet in COPY_FORMS:
        return _aten_op_of(COPY_FORMS[packet])
    return aliases.get(packet, packet)


def lowered_ops() -> set[str]:
    """aten op names some lowering pattern rewrites: the ops the patterns declare in
    their `OPS`, which is what convert-aten-to-mlx dispatches on."""
    from mlxir.conversions.aten_to_mlx import LOWERINGS_BY_OP

    return set(LOWERINGS_BY_OP)


RECORDED = ROOT / "tests" / "differential" / "coverage.json"
"""Each differential case's packets, as its coverage configuration (`coverage_config`)
saw them: checked by that configuration's own test, which exports and imports it
anyway, so that the table is kept current without exporting every case again."""


def coverage_config(case: Any) -> tuple[Any, bool]:
    """The (dtype, dynamic) configuration of a differential case whose graph the table
    reads: its first dtype, dynamic when the case has a dynamic variant (it adds the
    sym_size/arith ops)."""
    return case.dtypes[0], bool(case.dynamic) and not case.static_only


def case_packets(exported: Any, imported: Any, case_dtype: Any) -> dict[str, Any]:
    """What one case records: the packets its exported graph calls, and for each packet
    the graph the importer receives calls, the dtypes those calls work on (None: the
    case's own dtype, which the call follows; a name: one the graph fixes, a
    comparison's bool)."""
    import torch

    from mlxir.conversions.torch_to_aten import packet_name, torch_overload

    def operand_dtype(node: torch.fx.Node) -> torch.dtype | None:
        """The dtype the op works on: its first tensor operand's, else its result's."""
        for value in (*(arg.meta.get("val") for arg in node.all_input_nodes), node.meta.get("val")):
            for item in cast(Sequence[object], value) if isinstance(value, list | tuple) else (value,):
                if isinstance(item, torch.Tensor):
                    return item.dtype
        return None

    def calls(graph: torch.fx.Graph) -> list[tuple[str, torch.fx.Node]]:
        found: list[tuple[str, torch.fx.Node]] = []
        for node in graph.nodes:
            overload = torch_overload(node.target) if node.op == "call_function" else None
            if overload is not None:
                found.append((packet_name(overload), node))
        return found

    worked_on: dict[str, set[str | None]] = defaultdict(set)
    for packet, node in calls(imported):
        dtype = operand_dtype(node)
        worked_on[packet].add(None if dtype in (case_dtype, None) else str(dtype).removeprefix("torch."))
    return {
        "exported": sorted({packet for packet, _ in calls(exported)}),
        "imported": {
            packet: sorted(dtypes, key=lambda d: "" if d is None else d) for packet, dtypes in sorted(worked_on.items())
        },
    }


def _differential() -> tuple[Any, Any]:
    """The differential suite's `cases` and `harness` modules (tests/ is outside the
    type-checked tree: its modules are untyped, `Any`, here)."""
    if str(ROOT / "tests") not in sys.path:
        sys.path.insert(0, str(ROOT / "tests"))
    return importlib.import_module("differential.cases"), importlib.import_module("differential.harness")


def measure() -> dict[str, dict[str, Any]]:
    """Every case's record, from an export and import of its coverage configuration."""
    import torch
    from torch.export import export

    from mlxir.conversions.torch_to_aten.importer import graph_to_import

    cases, harness = _differential()
    records: dict[str, dict[str, Any]] = {}
    for case in cases.CASES:
        dtype, dynamic = coverage_config(case)
        module = harness.Fn(case.fn, case.params(dtype) if case.params else None)
        inputs = case.make(harness.EXPORT_SIZE, dtype)
        shapes = harness._dynamic_shapes(case, len(inputs), case.min_size) if dynamic else None
        with torch.no_grad():
            ep = export(module, inputs, dynamic_shapes=(shapes,) if shapes else None)
        _, imported, _ = graph_to_import(ep, "nodes" if case.decompose else "none")
        records[case.name] = case_packets(ep.graph, imported, dtype)
    return records


def recorded() -> dict[str, dict[str, Any]]:
    import json

    return json.loads(RECORDED.read_text()) if RECORDED.exists() else {}


def exercised_packets(
    records: dict[str, dict[str, Any]],
) -> tuple[dict[str, list[tuple[tuple[str, ...], bool]]], dict[str, int]]:
    """ATen packet → the (dtypes its calls work on, dynamic) of every differential
    configuration whose graph, as the importer receives it, calls the packet; and packet
    → how many configurations' exported graphs (before torch's decompositions) call it."""
    cases, harness = _differential()
    used: dict[str, list[tuple[tuple[str, ...], bool]]] = defaultdict(list)
    exported: dict[str, int] = defaultdict(int)
    for case, dtype, dynamic in harness.configurations(cases.CASES):
        record = records[case.name]
        case_dtype = str(dtype).removeprefix("torch.")
        for name, operands in record["imported"].items():
            worked_on = tuple(sorted({operand or case_dtype for operand in operands}))
            used[name].append((worked_on, dynamic))
        for name in record["exported"]:
            exported[name] += 1
    return used, exported


def table(records: dict[str, dict[str, Any]]) -> str:
    """docs/coverage.md from each case's record (`recorded()`, or `measure()`)."""
    from mlxir.conversions.torch_to_aten import IMPORTERS

    lowered = lowered_ops()
    used, exported = exercised_packets(records)
    rows: list[str] = []
    for packet in sorted(IMPORTERS):
        op = _aten_op_of(packet)
        if op is None:
            continue
        configs = used.get(packet, [])
        dtypes = sorted({d for worked_on, _ in configs for d in worked_on})
        dynamic = any(dyn for _, dyn in configs)
        rows.append(
            f"| `{packet}` | `{op}` | {'yes' if op in lowered else '**no**'} | {len(configs)} "
            f"| {', '.join(dtypes) or '—'} | {'yes' if dynamic else 'no'} | {exported.get(packet, 0)} |"
        )
    total = sum(len(v) for k, v in used.items() if k in IMPORTERS)
    header = [
        "# ATen coverage",
        "",
        "Generated by `python -m mlxir.tools.coverage --write` from the importer's table,",
        "the lowering patterns and the differential suite; `tests/test_coverage.py` fails",
        "when this file is out of date.",
        "",
        "*configurations*: the differential configurations whose graph, as the importer",
        "receives it, calls the packet, so its own importer entry and lowering ran",
        f"({total} packet-configuration pairs in all). *dtypes*: what those calls work on",
        "(their first tensor operand, or their result for creation ops). *in exported graphs*: the",
        "configurations whose exported graph calls it; where that count is higher, the other",
        "calls were decomposed (node by node, or by torch's whole-program re-trace where the",
        "graph needs it) into ops counted in their rows before mlxir imported them. A graph",
        "reaches the importer with nothing decomposed from ExecuTorch Edge programs and",
        "`import_program(ep, decompose=False)`; the suite's `undecomposed_*` cases import that way.",
        "",
        "| ATen packet | aten op | lowered | configurations | dtypes | dynamic shapes | in exported graphs |",
        "|---|---|---|---|---|---|---|",
    ]
    return "\n".join([*header, *rows]) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--write", action="store_true", help=f"write {TABLE.relative_to(ROOT)}")
    args = parser.parse_args(argv)
    records = measure()
    text = table(records)
    if args.write:
        import json

        RECORDED.write_text(json.dumps(records, indent=1, sort_keys=True) + "\n")
        TABLE.parent.mkdir(exist_ok=True)
        TABLE.write_text(text)
        print(f"wrote {TABLE} and {RECORDED.relative_to(ROOT)}")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
