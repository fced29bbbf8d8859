"""Runs the whole OpInfo suite and writes what it found: `tests/opinfo/outcomes.json`
(what `tests/test_opinfo.py` expects of every configuration) and `docs/opinfo.md`.

    .venv/bin/python tests/opinfo/sweep.py [--write] [--jobs 2] [--ops NAME,...]

Without `--write` it prints the summary and every mismatch and crash. Each job is a
process of its own (OpInfo's samples and torch.export are single-threaded)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

TESTS = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(TESTS))

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MLXIR_CACHE_DIR", "none")

import mlxir  # noqa: E402,F401  (before mlx.core: it binds the BLAS)
from opinfo.harness import configurations, dtype_name, run_configuration  # noqa: E402
from opinfo.table import OUTCOMES, TABLE, config_key, render  # noqa: E402


def _run(config: tuple[str, str]) -> tuple[str, list[str]]:
    import torch

    name, dtype = config
    outcomes = [str(o) for o in run_configuration(name, getattr(torch, dtype))]
    return config_key(name, dtype), outcomes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--ops", default="")
    args = parser.parse_args()
    wanted = set(args.ops.split(",")) if args.ops else None
    configs = [
        (name, dtype_name(dtype)) for name, dtype in configurations()
        if wanted is None or name in wanted
    ]
    with ProcessPoolExecutor(args.jobs) as pool:
        found = dict(pool.map(_run, configs, chunksize=8))
    for key, outcomes in sorted(found.items()):
        for outcome in outcomes:
            if outcome.startswith(("mismatch", "crash")):
                print(f"{key}: {outcome}")
    if args.write:
        OUTCOMES.write_text(json.dumps(found, indent=0, sort_keys=True) + "\n")
        TABLE.write_text(render(found))
        print(f"wrote {OUTCOMES} and {TABLE}")
    else:
        print(render(found).split("\n## ")[0])


if __name__ == "__main__":
    main()
