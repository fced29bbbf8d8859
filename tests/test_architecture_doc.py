"""`docs/architecture.md` says what the tree is: its parts table names every module of
each part (a module in a subfolder together with that subfolder), and its tests table
names every test file. A module added, moved or deleted without the table following
fails here, naming the module and the row."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ARCHITECTURE = ROOT / "docs" / "architecture.md"

GENERATED = {Path("codegen/fb")}
"""Folders written by tools, not by hand (`make fbs`): described as a whole."""


def table_rows(heading: str) -> dict[str, str]:
    """The rows of the first table under `## heading`: first cell → the whole row."""
    text = ARCHITECTURE.read_text()
    section = text.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]
    rows: dict[str, str] = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if line.startswith("|") and len(cells) > 1 and not set(cells[0]) <= {"-"}:
            rows[cells[0].strip("`")] = line
    return rows


def modules_of(part: str) -> list[Path]:
    folder = ROOT / part
    return sorted(
        path.relative_to(folder)
        for path in folder.rglob("*.py")
        if path.name != "__init__.py"
        and "__pycache__" not in path.parts
        and not any(path.is_relative_to(ROOT / generated) for generated in GENERATED)
    )


PARTS = table_rows("The parts")
FOLDER_PARTS = sorted(part.rstrip("/") for part in PARTS if part.endswith("/"))


def test_the_table_has_a_row_per_top_level_folder() -> None:
    folders = {
        path.name
        for path in ROOT.iterdir()
        if path.is_dir() and (path / "__init__.py").exists() and path.name != "tests"
    }
    assert folders - {"benchmarks"} == set(FOLDER_PARTS)


def named_in(row: str, module: Path) -> bool:
    """Whether the row names `module`: its file name, with each folder above it."""
    words = set(re.findall(r"[\w.]+(?:/[\w.]+)*/?", row))
    names = {part for word in words for part in word.split("/") if part}
    return module.name in names and all(folder in names for folder in module.parent.parts)


def described_as_a_pass(part: str, module: Path) -> bool:
    """Whether "The passes" tables describe `module`: by its path, or as the pass it is
    named after (`fuse_rope.py` is `fuse-rope`), so the parts table need not repeat
    them."""
    passes = ARCHITECTURE.read_text().split("\n## The passes\n", 1)[1].split("\n## ", 1)[0]
    pass_name = module.stem.replace("_", "-")
    return f"{part}/{module}" in passes or f"`{pass_name}`" in passes


@pytest.mark.parametrize("part", FOLDER_PARTS)
def test_every_module_is_named_in_its_part_row(part: str) -> None:
    row = PARTS[f"{part}/"]
    missing = [
        str(module)
        for module in modules_of(part)
        if not named_in(row, module) and not described_as_a_pass(part, module)
    ]
    assert not missing, f"docs/architecture.md's `{part}/` row does not name {missing}"


def test_every_named_module_exists() -> None:
    for part in FOLDER_PARTS:
        named = set(re.findall(r"`([\w/]+\.py)`", PARTS[f"{part}/"]))
        files = [path.relative_to(ROOT / part) for path in (ROOT / part).rglob("*.py")]
        names = {path.name for path in files} | {str(path) for path in files}
        stale = sorted(name for name in named if name.split("/")[-1] not in names and name not in names)
        assert not stale, f"docs/architecture.md's `{part}/` row names {stale}, not in {part}/"


def test_every_test_file_is_in_the_tests_table() -> None:
    text = ARCHITECTURE.read_text().split("\n## Tests, by level\n", 1)[1]
    missing = sorted(
        path.name for path in (ROOT / "tests").glob("test_*.py") if path.name not in text
    )
    assert not missing, f"docs/architecture.md's tests table does not name {missing}"
