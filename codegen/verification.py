"""Which programs this machine has already verified.

Verifying a program (`Program(verify=True)`, the default for every load) rebuilds its
IR in xDSL and runs every op's verifier: half a second to import xDSL and the dialects,
then about 0.2 ms per instruction. A program is loaded far more often than it changes,
so a verdict is kept: after a program passed verification, or after `serialize` wrote
it from IR it had just verified, its *key* is recorded, and a later load of a program
with the same key skips the rebuild (and never imports xDSL).

The key is a SHA-256 this module computes, never one the file carries (a file cannot
vouch for itself). It covers:

- everything the verifiers read: the FlatBuffer (ops, slots and their types,
  properties, globals' shapes and dtypes) and every byte of the payload segment
  outside the globals' payloads (dense properties, padding);
- the verifier itself: the source of mlxir's dialects and program reader, and the
  installed xDSL release.

The globals' payloads (the weights) are left out: no verifier reads a weight's values,
and `read_program` still checks, at every load, that each payload lies inside the
file and holds its global's shape and dtype. So a weight file changed in place keeps
its verdict, and any change to the program's structure or to the verifier loses it.

Verdicts are empty files under `$MLXIR_CACHE_DIR/verified` (default
`$XDG_CACHE_HOME/mlxir`, else `~/.cache/mlxir`); `MLXIR_CACHE_DIR=none` keeps none,
so every load verifies. A cache that cannot be written is not an error: the program
is verified again next time.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
from collections.abc import Callable, Iterable
from functools import cache
from pathlib import Path
from typing import Any

from mlxir.codegen.parts import ProgramParts
from mlxir.codegen.reader import ProgramInfo
from mlxir.support.cache import cache_root

VERIFIER_SOURCES = (
    "dialects",
    "codegen/deserializer.py",
    "codegen/reader.py",
    "codegen/attributes.py",
    "codegen/op_rules.py",
    "codegen/ops.py",
    "support/dtypes.py",
    "support/xdsl_fixes.py",
)
"""What decides a verdict, relative to the package: mlxir's side of the verifier."""

_PACKAGE = Path(__file__).resolve().parent.parent


def cache_dir() -> Path | None:
    """Where verdicts are kept (None: nowhere): mlxir's cache folder
    (`support/cache.py`)."""
    return cache_root()


def _sha256_constructor() -> Callable[[bytes], Any]:
    """CPython's own SHA-256, the one hashlib falls back to, where this Python has it:
    importing hashlib maps OpenSSL (about 4 MB resident) into every process that loads
    a program, to hash a few kilobytes."""
    for module in ("_sha2", "_sha256"):  # Python 3.12+, 3.11
        try:
            return importlib.import_module(module).sha256
        except ImportError:
            continue
    import hashlib

    return hashlib.sha256


_sha256 = _sha256_constructor()


@cache
def verifier_fingerprint() -> bytes:
    """A digest of the verifier: mlxir's dialects and reader, and xDSL's release."""
    digest = _sha256(b"mlxir verification 1\0")
    for entry in VERIFIER_SOURCES:
        path = _PACKAGE / entry
        for source in sorted(path.glob("*.py")) if path.is_dir() else [path]:
            digest.update(source.relative_to(_PACKAGE).as_posix().encode() + b"\0")
            digest.update(source.read_bytes())
    digest.update(_xdsl_release().encode())
    return digest.digest()


def _xdsl_release() -> str:
    """The installed xDSL's distribution name and version, read from its `.dist-info`
    folder's name (no import, and cheaper than `importlib.metadata`)."""
    spec = importlib.util.find_spec("xdsl")
    if spec is None or spec.origin is None:
        return "no xdsl"
    site = Path(spec.origin).parent.parent
    releases = sorted(
        name for name in os.listdir(site) if name.startswith("xdsl-") and name.endswith(".dist-info")
    )
    return ",".join(releases) or str(Path(spec.origin).stat().st_mtime_ns)


def program_key(data: memoryview | bytes | ProgramParts, segment_start: int, payloads: Iterable[tuple[int, int]]) -> str:
    """The key of a program: `data` its bytes, `segment_start` where its payload
    segment starts, `payloads` each global's (offset from the segment, length)."""
    digest = _sha256(verifier_fingerprint())
    digest.update(data[:segment_start])
    position = segment_start
    for offset, length in sorted((segment_start + o, n) for o, n in payloads):
        if offset > position:
            digest.update(data[position:offset])
        position = max(position, offset + length)
    digest.update(data[position:])
    return digest.hexdigest()


def key_of(info: ProgramInfo, data: memoryview | bytes) -> str:
    """The key of the program `read_program` read from `data` as `info`."""
    return program_key(data, info.segment_start, ((g.offset, g.length) for g in info.globals))


def _entry(key: str) -> Path | None:
    folder = cache_dir()
    return None if folder is None else folder / "verified" / key[:2] / key


def is_verified(key: str) -> bool:
    entry = _entry(key)
    return entry is not None and entry.is_file()


def record_verified(key: str) -> None:
    entry = _entry(key)
    if entry is None:
        return
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        entry.touch()
    except OSError:
        pass  # a cache that cannot be written only means verifying again next time
