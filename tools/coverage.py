"""The ATen coverage table (docs/coverage.md), generated from the code.

    .venv/bin/python -m mlxir.tools.coverage            # print the table
    .venv/bin/python -m mlxir.tools.coverage --write    # update docs/coverage.md

For every ATen overload packet the importer handles (`IMPORTERS`): the `aten` op it
becomes, whether the lowering has a pattern for that op, and how many differential
configurations exercise it, with their dtypes and whether a dynamic-shape variant runs.
A configuration exercises a packet when the graph the importer receives calls it (after
torch's decompositions, unless the case imports undecomposed); the last column counts
the configurations whose exported graph calls it before any decomposition.
`tests/test_coverage.py` regenerates the table and fails if docs/coverage.md differs,
so the table cannot drift from the registered patterns or the test suite.
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


def exercised_packets() -> tuple[dict[str, list[tuple[tuple[str, ...], bool]]], dict[str, int]]:
    """ATen packet → the (dtypes its calls work on, dynamic) of every differential
    configuration whose graph, as the importer receives it, calls the packet; and packet
    → how many configurations' exported graphs (before torch's decompositions) call it."""
    sys.path.insert(0, str(ROOT / "tests"))
    import torch
    from torch.export import export

    # tests/ is outside the type-checked tree: its modules are untyped (`Any`) here.
    cases: Any = importlib.import_module("differential.cases")
    harness: Any = importlib.import_module("differential.harness")
    from mlxir.conversions.torch_to_aten import packet_name, torch_overload
    from mlxir.conversions.torch_to_aten.importer import graph_to_import

    def packets(graph: torch.fx.Graph) -> set[str]:
        overloads = (torch_overload(node.target) for node in graph.nodes if node.op == "call_function")
        return {packet_name(overload) for overload in overloads if overload is not None}

    def operand_dtype(node: torch.fx.Node) -> torch.dtype | None:
        """The dtype the op works on: its first tensor operand's, else its result's."""
        for value in (*(arg.meta.get("val") for arg in node.all_input_nodes), node.meta.get("val")):
            for item in cast(Sequence[object], value) if isinstance(value, list | tuple) else (value,):
                if isinstance(item, torch.Tensor):
                    return item.dtype
        return None

    def operand_dtypes(graph: torch.fx.Graph, case_dtype: torch.dtype) -> dict[str, set[torch.dtype | None]]:
        """Packet → the dtypes its calls work on; None stands for the case's dtype (the
        call follows it), a dtype for one fixed by the graph (a comparison's bool)."""
        found: dict[str, set[torch.dtype | None]] = defaultdict(set)
        for node in graph.nodes:
            overload = torch_overload(node.target) if node.op == "call_function" else None
            if overload is not None:
                dtype = operand_dtype(node)
                found[packet_name(overload)].add(None if dtype in (case_dtype, None) else dtype)
        return found

    imported_by_case: dict[str, set[str]] = {}
    exported_by_case: dict[str, set[str]] = {}
    dtypes_by_case: dict[str, dict[str, set[torch.dtype | None]]] = {}
    for case in cases.CASES:
        dtype = case.dtypes[0]
        module = harness.Fn(case.fn, case.params(dtype) if case.params else None)
        inputs = case.make(harness.EXPORT_SIZE, dtype)
        # The dynamic variant when there is one: it adds the sym_size/arith ops.
        shapes = harness._dynamic_shapes(case, len(inputs), case.min_size) if case.dynamic and not case.static_only else None
        with torch.no_grad():
            ep = export(module, inputs, dynamic_shapes=(shapes,) if shapes else None)
        exported_by_case[case.name] = packets(ep.graph)
        _, imported, _ = graph_to_import(ep, "nodes" if case.decompose else "none")
        imported_by_case[case.name] = packets(imported)
        dtypes_by_case[case.name] = operand_dtypes(imported, dtype)
    used: dict[str, list[tuple[tuple[str, ...], bool]]] = defaultdict(list)
    exported: dict[str, int] = defaultdict(int)
    for case, dtype, dynamic in harness.configurations(cases.CASES):
        for name in imported_by_case[case.name]:
            worked_on = tuple(
                sorted({str(operand or dtype).removeprefix("torch.") for operand in dtypes_by_case[case.name][name]})
            )
            used[name].append((worked_on, dynamic))
        for name in exported_by_case[case.name]:
            exported[name] += 1
    return used, exported


def table() -> str:
    from mlxir.conversions.torch_to_aten import IMPORTERS

    lowered = lowered_ops()
    used, exported = exercised_packets()
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
