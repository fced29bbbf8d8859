"""`export_mlxfn`: a program as MLX's own function file (`.mlxfn`), which MLX loads
without mlxir, torch or Python (`mx.import_function`, C++ `mlx::core::import_function`,
Swift `importFunction(from:)`).

The file holds one traced graph of the program's steps per input signature (MLX's
`mx.exporter`), with the program's weights stored once for all of them.

Calling convention of the exported function (positional arguments only):

    fn(*tensor_inputs, *state_values) -> (*outputs, *new_state_values)

- `tensor_inputs`: the program's tensor inputs in its flat input order
  (`program.inputs`, the order of `Program.call_flat`), integer inputs left out, each
  of the dtype the program declares and of one of the exported shapes;
- `state_values`: every state value of the program (a KV cache kept as a buffer...),
  in `program.state` order, each of its declared dtype and shape;
- the result: the program's outputs, then every state value after the call, in the
  same order (a value the program does not store comes back as it went in). The
  caller keeps the state: it feeds the returned values to the next call. The initial
  values are the program's (`state_path=` writes them as safetensors).

Integer inputs (SymInts, `spec.dtype == "index"`) are given per signature and held
constant in its trace, as `Program`'s own `mx.compile`d traces hold them: MLX traces
arrays only, and the program does its integer arithmetic (the sizes of reshapes,
slices, broadcasts) in Python while tracing, so an integer cannot stay an input. The
values are recorded in the file's metadata. Two signatures whose tensor shapes agree
cannot both be exported: MLX picks a trace by its input shapes alone.

The file's metadata (`mx.import_function(path, return_metadata=True)`, C++
`ImportedFunction::metadata()`) is JSON naming the inputs, state and outputs with
their dtypes and shapes, and each signature with its integer values (`FORMAT`).

MLX's `shapeless` export is not offered: it would replay the traced graph with the
sizes the program computed for the traced shapes baked into its reshapes, slices and
broadcasts.
"""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

import mlx.core as mx

from mlxir.evaluator.arrays import mx_dtype
from mlxir.runtime.program import InputError, Program

__all__ = ["FORMAT", "ExportError", "declared_signature", "export_mlxfn", "parse_signature"]

FORMAT = "mlxir.mlxfn/1"
"""The `format` field of the metadata; a change to the calling convention changes it."""

SignatureItem = Sequence[int] | int | Any
"""One input of a signature: a shape (tensor input), an integer (integer input), or an
array whose shape and dtype are used (a numpy, MLX or torch tensor)."""


class ExportError(ValueError):
    """The program, or one of its signatures, cannot be exported."""


def export_mlxfn(
    program: Program,
    path: str | Path,
    signatures: Sequence[Sequence[SignatureItem]] | None = None,
    *,
    state_path: str | Path | None = None,
) -> dict[str, Any]:
    """Writes `program` to `path` as an `.mlxfn` file with one trace per signature
    (see the module docstring for the calling convention) and returns its metadata.

    A signature lists one item per program input, in order: a shape for a tensor input,
    the value for an integer input (held constant in that trace), or an example array.
    Without `signatures`, the program's declared shapes (a static program only).
    `state_path`: also write the program's current state values (its initial values
    for a freshly loaded program) there, as MLX safetensors keyed by state name.

    Raises `InputError` for a signature that does not fit the program's inputs (naming
    the signature and the input) and `ExportError` for anything else that prevents
    the export; `path` is left untouched then."""
    if program.native_unavailable is not None:
        raise ExportError(f"this program cannot be exported: {program.native_unavailable}")
    if signatures is None:
        signatures = [declared_signature(program)]
    if not signatures:
        raise ExportError("no signature to export")
    traces = [_trace_inputs(program, number, signature) for number, signature in enumerate(signatures, 1)]
    seen: dict[tuple[tuple[int, ...], ...], int] = {}
    for number, arrays in enumerate(traces, 1):
        key = tuple(tuple(v.shape) for v in arrays if isinstance(v, mx.array))
        if key in seen:
            raise ExportError(
                f"signature {number} has the tensor shapes of signature {seen[key]}: the "
                "exported function picks a trace by its input shapes alone, so the two "
                "cannot share a file"
            )
        seen[key] = number

    state = program.state
    state_names = tuple(state)
    state_values = [state[name] for name in state_names]
    mx.eval(*state_values)  # pyright: ignore[reportUnknownMemberType] (mlx's stub leaves eval's *args unannotated)
    metadata = _metadata(program, traces, state_values)
    target = Path(path)
    _check_writable(target)
    state_file = None if state_path is None else Path(state_path)
    if state_file is not None:
        if state_file.suffix != ".safetensors":
            # MLX would append the suffix itself and write where the caller did not say.
            raise ExportError(f"the state file must end in .safetensors, got '{state_file}'")
        _check_writable(state_file)

    integers: dict[int, int] = {}

    def run(*flat: mx.array) -> tuple[mx.array, ...]:
        outputs, given, pending = program.run_traceable(flat, integers, views=True)
        # Every state value comes back, stored or not, so the convention does not
        # depend on which values a program happens to write.
        return (*outputs, *(pending.get(name, value) for name, value in given.items()))

    # MLX writes the file as it traces: a failed trace must not leave half a file at
    # `path`, so the file is written next to it and moved there once complete. MLX
    # creates it (not mkstemp, whose mode 0600 would outlive the rename).
    temporary = str(target.with_name(f".{target.name}.{secrets.token_hex(6)}.tmp"))
    try:
        try:
            writer = mx.exporter(temporary, run, metadata=json.dumps(metadata))  # pyright: ignore[reportUnknownMemberType] (mlx's stub types exporter's fun as a bare Callable)
        except Exception as error:  # MLX reports a file it cannot open as RuntimeError
            raise ExportError(f"cannot write '{target}': {error}") from error
        # One CPU stream: the file's graph should not depend on this machine's cores.
        with program.lock, program.backend.exporting():  # a run keeps the call's state on the program
            with writer as exporter:
                for number, arrays in enumerate(traces, 1):
                    integers.clear()
                    integers.update({i: v for i, v in enumerate(arrays) if not isinstance(v, mx.array)})
                    flat = [v for v in arrays if isinstance(v, mx.array)] + state_values
                    try:
                        exporter(*flat)
                    except Exception as error:  # an op that cannot be traced, MLX's refusal
                        raise ExportError(
                            f"signature {number} ({_describe(arrays)}): {error}"
                        ) from error
        if state_file is not None:
            _save_state(state_file, dict(zip(state_names, state_values)))
        os.replace(temporary, target)
    except OSError as error:
        raise ExportError(f"cannot write '{target}': {error.strerror or error}") from error
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)
    return metadata


def declared_signature(program: Program) -> list[SignatureItem]:
    """The program's declared input shapes, when it has no dynamic dim and no integer
    input."""
    signature: list[SignatureItem] = []
    for spec in program.inputs:
        if spec.dtype == "index":
            raise ExportError(
                f"input '{spec.name}' is an integer: give its value in a signature (it is "
                "held constant in the trace)"
            )
        if None in spec.shape:
            raise ExportError(
                f"input '{spec.name}' has a dynamic shape ({spec.describe(symbols=False)}): give the "
                "shapes to export"
            )
        signature.append(tuple(d for d in spec.shape if d is not None))
    return signature


def parse_signature(text: str, program: Program) -> list[SignatureItem]:
    """`1x16,4` as a signature of `program`: one item per input, separated by commas;
    a shape `AxBxC` (`scalar` for a 0-d tensor) for a tensor input, a plain integer for
    an integer input. Raises `InputError` naming what does not parse."""
    items = [item.strip() for item in text.split(",")]
    if len(items) != len(program.inputs):
        names = ", ".join(f"{s.name} ({s.describe(symbols=False)})" for s in program.inputs)
        raise InputError(f"{len(items)} item(s), the program takes {len(program.inputs)} input(s): {names}")
    signature: list[SignatureItem] = []
    for spec, item in zip(program.inputs, items):
        if spec.dtype == "index":
            try:
                signature.append(int(item))
            except ValueError:
                raise InputError(
                    f"input '{spec.name}' is an integer: expected its value, got '{item}'"
                ) from None
            continue
        if item == "scalar":
            signature.append(())
            continue
        try:
            shape = tuple(int(d) for d in item.split("x"))
        except ValueError:
            shape = ()
        if not shape or any(d < 0 for d in shape):
            raise InputError(
                f"input '{spec.name}': expected a shape like 2x16 ('scalar' for 0-d), got '{item}'"
            )
        signature.append(shape)
    return signature


def _trace_inputs(program: Program, number: int, signature: Sequence[SignatureItem]) -> list[Any]:
    """The checked inputs of one signature: zero arrays of its shapes (their values are
    never read: tracing records operations only) and its integers."""
    if len(signature) != len(program.inputs):
        raise InputError(
            f"signature {number}: the program takes {len(program.inputs)} input(s) "
            f"({', '.join(s.name for s in program.inputs)}), got {len(signature)}"
        )
    values: list[Any] = []
    for spec, item in zip(program.inputs, signature):
        if spec.dtype != "index" and isinstance(item, Sequence) and not isinstance(item, str):
            dims = cast(Sequence[object], item)  # what the caller gave: checked here
            if not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in dims):
                raise InputError(f"signature {number}: input '{spec.name}': {item!r} is not a shape")
            values.append(mx.zeros(tuple(cast(Sequence[int], dims)), dtype=mx_dtype(spec.dtype)))
        else:
            values.append(item)
    try:
        arrays = program.check_inputs(values)
    except InputError as error:
        raise InputError(f"signature {number} ({_describe(values)}): {error}") from None
    # A tensor given as an example array would be captured by value; only its shape
    # and dtype belong in the trace.
    return [mx.zeros(v.shape, dtype=v.dtype) if isinstance(v, mx.array) else v for v in arrays]


def _describe(values: Sequence[Any]) -> str:
    """A signature as `--shape` writes it (`4x16,7`)."""
    return ",".join(
        ("x".join(str(d) for d in v.shape) or "scalar") if hasattr(v, "shape") else str(v)
        for v in values
    )


def _dtype(value: mx.array) -> str:
    return str(value.dtype).removeprefix("mlx.core.")


def _metadata(program: Program, traces: Sequence[Sequence[Any]], state: Sequence[mx.array]) -> dict[str, Any]:
    slots = program.info.slots
    tensors = [spec for spec in program.inputs if spec.dtype != "index"]
    return {
        "format": FORMAT,
        "inputs": [{"name": spec.name, "dtype": spec.dtype, "shape": list(spec.shape)} for spec in tensors],
        "integers": [spec.name for spec in program.inputs if spec.dtype == "index"],
        "state": [
            {"name": name, "dtype": _dtype(value), "shape": list(value.shape)}
            for name, value in zip(program.state, state)
        ],
        "outputs": [
            {"name": name, "dtype": slots[slot].dtype, "shape": list(slots[slot].shape)}
            for name, slot in zip(program.output_names, program.info.outputs)
        ],
        "signatures": [
            {
                "shapes": [list(v.shape) for v in arrays if isinstance(v, mx.array)],
                "integers": {
                    spec.name: v for spec, v in zip(program.inputs, arrays) if not isinstance(v, mx.array)
                },
            }
            for arrays in traces
        ],
    }


def _check_writable(path: Path) -> None:
    if path.is_dir():
        raise ExportError(f"cannot write '{path}': it is a folder")
    if not path.parent.is_dir():
        raise ExportError(f"cannot write '{path}': no such folder '{path.parent}'")


def _save_state(path: Path, state: dict[str, mx.array]) -> None:
    try:
        mx.save_safetensors(str(path), state, metadata={"format": FORMAT})  # pyright: ignore[reportUnknownMemberType] (mlx's stub leaves save_safetensors' result unannotated)
    except Exception as error:  # MLX reports a failed write as RuntimeError/ValueError
        raise ExportError(f"cannot write '{path}': {error}") from error
