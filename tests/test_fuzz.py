"""CI smoke runs of the fuzzers in `tests/fuzz/` (the long runs are manual:
`python tests/fuzz/fuzz_program.py --minutes 10`, `python tests/fuzz/fuzz_parser.py
--minutes 10`). Hypothesis draws the cases, derandomized: every run checks the same
inputs, and a failure shrinks to a small one."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from fuzz import fuzz_parser, fuzz_program


def smoke(examples: int) -> settings:
    return settings(
        max_examples=examples,
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )


mutation = st.tuples(
    st.integers(0, fuzz_program.BYTE_KINDS + fuzz_program.IR_KINDS - 1),
    st.integers(0, 2**32 - 1),
    st.integers(0, 2**32 - 1),
)
program_case = st.builds(
    fuzz_program.Case,
    st.integers(0, len(fuzz_program.corpus()) - 1),
    st.lists(mutation, min_size=1, max_size=4).map(tuple),
    st.integers(0, 2**16),
)


@pytest.mark.parametrize("name", [name for name, _ in fuzz_program.corpus()])
def test_corpus_programs_run(name: str) -> None:
    """Unmutated, every corpus program loads and its call returns or fails cleanly
    (hand-written IR functions do not say how their dynamic dims relate)."""
    data = dict(fuzz_program.corpus())[name]
    assert fuzz_program.run_case(data) in ("ran", "kernel-error")


@smoke(3000)
@given(program_case)
def test_mutated_programs_load_run_or_fail_cleanly(case: fuzz_program.Case) -> None:
    event(fuzz_program.run_case(case.data(), case.input_seed))


token_mutation = st.tuples(st.integers(0, 8), st.integers(0, 2**32 - 1), st.integers(0, 2**32 - 1))
parser_case = st.builds(
    fuzz_parser.Case,
    st.integers(0, len(fuzz_parser.chunks()) - 1),
    st.lists(token_mutation, min_size=1, max_size=3).map(tuple),
    st.integers(0, len(fuzz_parser.PIPELINES) - 1),
)


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz") / "fuzz.mlir"


@smoke(1000)
@given(case=parser_case)
def test_mutated_mlir_gets_a_located_diagnostic(case: fuzz_parser.Case, scratch: Path) -> None:
    event(fuzz_parser.run_case(case.text(), case.args(), path=scratch))
