"""Runs the whole zoo, timed, and with `--write` records it (`tests/zoo/outcomes.json`)
and renders `docs/models.md`.

    .venv/bin/python tests/zoo/run.py [--write | --full] [--models NAME,...]

With `--models`, `--write` records those and keeps what the others had.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("MLXIR_CPU_STREAMS", "1")  # one thread each, before mlxir is imported
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> None:
    import torch

    from zoo import models as zoo_models
    from zoo.harness import OUTCOMES, TABLE, as_record, recorded, render, run
    from zoo.models import ARCHITECTURES

    torch.set_num_threads(1)
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--models", default="")
    parser.add_argument("--full", action="store_true", help="larger run inputs (never written: the table is CI's)")
    args = parser.parse_args()
    if args.full and args.write:
        parser.error("--full runs are not recorded: the table holds the sizes CI runs")
    zoo_models.FULL_SIZES = args.full
    wanted = set(args.models.split(",")) if args.models else None
    found = {}
    for architecture in ARCHITECTURES:
        if wanted is not None and architecture.name not in wanted:
            continue
        outcome = run(architecture, timed=True)
        found[architecture.name] = as_record(outcome)
        print(f"{architecture.name:32s} {outcome.status:12s} {outcome.max_error or 0:.1e} "
              f"{outcome.compile_s or 0:.2f} s {outcome.detail[:100]}", flush=True)
    if args.write:  # with --models, the others keep what was recorded
        merged = recorded() | found
        found = {a.name: merged[a.name] for a in ARCHITECTURES if a.name in merged}
        OUTCOMES.write_text(json.dumps(found, indent=1) + "\n")
        TABLE.write_text(render(found))
        print(f"wrote {OUTCOMES} and {TABLE}")


if __name__ == "__main__":
    main()
