"""The BLAS behind MLX's CPU matmuls on Linux, chosen when `mlxir` is imported.

MLX's Linux wheel bundles a reference BLAS (under 5 GFLOP/s on a 1024x1024 float32
matmul on two cores, where OpenBLAS gives over 100; docs/blas.md). libmlx takes `cblas_sgemm` from the process's
global symbol scope before its own dependencies, and Python loads extension modules with
RTLD_NOW, so the symbol is bound once, when `mlx.core` is imported: a library loaded
with RTLD_GLOBAL before that import wins, one loaded after it never does.

`select_blas()` therefore loads, on Linux and only while `mlx.core` is not imported
yet:

- the library named by `MLXIR_BLAS=<path>`, or nothing with `MLXIR_BLAS=none`; a path
  that cannot be loaded is one `BlasWarning` and MLX keeps its bundled BLAS;
- otherwise the first of `candidates()`: an MKL installed into this Python environment
  (`pip install mkl`, or mlxir's `mkl` extra), then the system OpenBLAS (Debian's
  openblas-pthread, -openmp, -serial variants first, then `libopenblas*` in the dynamic
  loader's directories), then any other MKL's `libmkl_rt.so*`. The environment's MKL
  comes first because someone installed it there for this purpose, and because it is
  faster where it matters most: a product of one row by a weight (an LLM's decode step)
  runs 3-4x faster with it than with Debian's OpenBLAS 0.3.21 on a CPU without AVX-512,
  which packs the weight on every call (docs/blas.md).

`import mlxir` runs it at the first `import mlx.core` that follows, just before
(`select_blas_before_mlx`), not at once: a library loaded with RTLD_GLOBAL also
interposes the BLAS functions of every library loaded after it, and torch's are among
them. torch's MKL returns complex results in Intel's convention, OpenBLAS in
gfortran's, so with OpenBLAS loaded first `torch.dot` of complex tensors returns 0.
Loading it as late as possible lets a program that imports torch before it uses MLX
keep torch's own BLAS (docs/blas.md).

When `mlx.core` was imported first and a faster BLAS is on the machine, the hint is a
`BlasWarning` (a `UserWarning`, so `-W` and `warnings.filterwarnings` can silence it)
attributed to the line that imported mlxir. `selected()` says what was loaded and why;
`blas_in_use()` reads which file MLX's `cblas_sgemm` is bound to. The thread counts are
the libraries' own (OPENBLAS_NUM_THREADS, OMP_NUM_THREADS, MKL_NUM_THREADS): mlxir
reports them (`thread_settings()`) and never changes them. It changes one default: an
MKL it loads gets `KMP_BLOCKTIME=0` unless the user set it (`OPENMP_WAIT`).

Only os, sys, ctypes and stdlib modules Python has already imported at startup are used
here: `import mlxir` must stay cheap.
"""

from __future__ import annotations

import ctypes
import os
import sys
import warnings
from typing import Literal, NamedTuple

SYMBOL = "cblas_sgemm"
THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
Source = Literal["auto", "MLXIR_BLAS", "none", "too-late", "not-found", "failed", "not-linux"]


class BlasWarning(UserWarning):
    """MLX runs on its slow bundled BLAS although a faster one was asked for or exists."""


class BlasChoice(NamedTuple):
    """What `import mlxir` did about the BLAS. Immutable: a NamedTuple rather than a
    frozen dataclass because `dataclasses` imports `inspect`, which would double the cost
    of `import mlxir`."""

    path: str | None  # the library loaded with RTLD_GLOBAL; None when mlxir loaded none
    source: Source  # auto (found here), MLXIR_BLAS, none (MLXIR_BLAS=none), too-late, ...
    reason: str  # the same, in one sentence


_choice: BlasChoice | None = None


def selected() -> BlasChoice:
    """What `import mlxir` did about the BLAS (chooses now if it has not yet)."""
    return select_blas()


def select_blas() -> BlasChoice:
    """Loads the fastest BLAS found, or the one `MLXIR_BLAS` names, with RTLD_GLOBAL so
    that `mlx.core` binds `cblas_sgemm` to it. Runs once per process."""
    global _choice
    if _choice is None:
        _choice = _select()
    return _choice


def select_blas_before_mlx() -> None:
    """`select_blas()` at the first import of `mlx.core`, just before it runs (at once
    when `mlx.core` is already imported: the hint then points at `import mlxir`)."""
    if "mlx.core" in sys.modules:
        select_blas()
    elif not any(isinstance(finder, _BeforeMlx) for finder in sys.meta_path):
        sys.meta_path.insert(0, _BeforeMlx())


class _BeforeMlx:
    """An import-system finder that finds nothing: asked for `mlx.core`, it selects the
    BLAS, steps aside, and lets the usual finders import MLX."""

    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        if name == "mlx.core":
            sys.meta_path.remove(self)
            select_blas()
        return None


def _select() -> BlasChoice:
    request = os.environ.get("MLXIR_BLAS", "").strip()
    if not sys.platform.startswith("linux"):
        return BlasChoice(None, "not-linux", f"not Linux ({sys.platform}): MLX uses its platform's BLAS")
    if request.lower() == "none":
        return BlasChoice(None, "none", "MLXIR_BLAS=none: MLX uses its bundled BLAS")
    explicit = request.lower() not in ("", "auto")
    if "mlx.core" in sys.modules:
        _hint_too_late(request if explicit else None)
        return BlasChoice(
            None, "too-late", "mlx.core was imported before mlxir, its BLAS already bound"
        )
    if explicit:
        error = _load_quietly(request)
        if error is None:
            return BlasChoice(request, "MLXIR_BLAS", f"MLXIR_BLAS={request}")
        _warn(f"MLXIR_BLAS={request}: {error}; MLX uses its bundled BLAS")
        return BlasChoice(None, "failed", f"MLXIR_BLAS={request}: {error}")
    for path in candidates():
        # A candidate that does not load (another architecture's multiarch copy, a broken
        # install) is passed over quietly: the user asked for nothing in particular.
        if _load_quietly(path) is None:
            return BlasChoice(path, "auto", f"{_family(path)} found on this machine, loaded before MLX")
    return BlasChoice(None, "not-found", "no OpenBLAS or MKL found: MLX uses its bundled BLAS")


OPENMP_WAIT = ("KMP_BLOCKTIME", "0")
"""What an MKL under MLX gets unless the user set it: its Intel OpenMP threads sleep
as soon as a product ends instead of spinning for 200 ms. A spinning MKL thread holds
the core the native kernels' pool worker needs next (docs/native-kernels.md): on the
2-vCPU development VM, a one-row float32 product by a 32000 x 512 weight at 2 threads
right after an MKL call took 5.6 ms with the default and 3.1 ms with 0, and the 56M
Llama's float32 decode step at 2 threads 11.7 against 10.0 ms (medians of 3
processes; its 128-token prefill 65 against 61 ms, 4-bit unchanged)."""


def _load_quietly(path: str) -> str | None:
    """`_load_global(path)`, an MKL with `OPENMP_WAIT` set first (its OpenMP runtime
    reads the variable when it starts) and taken back if it does not load."""
    name, value = OPENMP_WAIT
    ours = "mkl" in os.path.basename(path).lower() and name not in os.environ
    if ours:
        os.environ[name] = value
    error = _load_global(path)
    if error is not None and ours:
        del os.environ[name]
    return error


# ---------------------------------------------------------------------------
# Finding a fast BLAS
# ---------------------------------------------------------------------------

OPENBLAS_NAMES = ("libopenblas.so.0", "libopenblasp.so.0", "libopenblaso.so.0", "libopenblas.so.3", "libopenblas.so")
MKL_NAMES = ("libmkl_rt.so.3", "libmkl_rt.so.2", "libmkl_rt.so.1", "libmkl_rt.so")
# Debian/Ubuntu install each OpenBLAS threading flavour in its own folder; the plain
# libopenblas.so.0 beside them is whichever `update-alternatives` picked.
DEBIAN_FLAVOURS = ("openblas-pthread", "openblas-openmp", "openblas-serial")
MKL_DIRS = (
    "/opt/intel/oneapi/mkl/latest/lib/intel64",
    "/opt/intel/oneapi/mkl/latest/lib",
    "/opt/intel/mkl/lib/intel64",
)
# Debian's multiarch triplets where they differ from `uname -m`.
_MULTIARCH = {
    "ppc64le": "powerpc64le-linux-gnu",
    "armv7l": "arm-linux-gnueabihf",
    "i686": "i386-linux-gnu",
}


def multiarch() -> str:
    """This interpreter's multiarch triplet, e.g. x86_64-linux-gnu or aarch64-linux-gnu."""
    triplet = getattr(sys.implementation, "_multiarch", None)
    if isinstance(triplet, str) and triplet:
        return triplet
    machine = os.uname().machine
    return _MULTIARCH.get(machine, f"{machine}-linux-gnu")


def library_dirs() -> list[str]:
    """The folders the dynamic loader searches, in its order: LD_LIBRARY_PATH, the
    ld.so.conf folders (what `ldconfig -p` caches), then the default ones. Read here
    instead of calling `ctypes.util.find_library`, which runs ldconfig and then gcc and
    would add about 50 ms to `import mlxir` on a machine without OpenBLAS."""
    triplet = multiarch()
    dirs = [d for d in os.environ.get("LD_LIBRARY_PATH", "").split(":") if d]
    dirs += _ld_so_conf("/etc/ld.so.conf")
    dirs += [
        f"/usr/local/lib/{triplet}", "/usr/local/lib", "/usr/local/lib64", f"/lib/{triplet}",
        f"/usr/lib/{triplet}", "/usr/lib64", "/lib64", "/usr/lib", "/lib", "/opt/OpenBLAS/lib",
    ]
    return list(dict.fromkeys(os.path.normpath(d) for d in dirs))


def _ld_so_conf(path: str, depth: int = 0) -> list[str]:
    try:
        with open(path, encoding="utf-8", errors="replace") as file:
            lines = file.read().splitlines()
    except OSError:
        return []
    dirs: list[str] = []
    for line in lines:
        line = line.split("#", 1)[0].strip()
        if line.startswith("include") and depth < 4:
            # `include /etc/ld.so.conf.d/*.conf` is the only form distributions use.
            pattern = line.removeprefix("include").strip()
            folder, _, name = pattern.rpartition("/")
            prefix, star, suffix = name.partition("*")
            try:
                names = sorted(os.listdir(folder or "/"))
            except OSError:
                continue
            for entry in names:
                if entry == name or (star and entry.startswith(prefix) and entry.endswith(suffix)):
                    dirs += _ld_so_conf(os.path.join(folder, entry), depth + 1)
        elif line.startswith("/"):
            dirs.append(line.split()[0])
    return dirs


def candidates() -> list[str]:
    """The fast BLAS libraries on this machine, preferred first: this environment's MKL
    (`pip install mkl` puts it in the environment's `lib/`), OpenBLAS (Debian's pthread
    flavour first), then any other MKL. Files that exist; whether they load is not tried."""
    prefixes = dict.fromkeys((sys.prefix, sys.base_prefix))
    found = [os.path.join(p, "lib", name) for p in prefixes for name in MKL_NAMES]
    triplet = multiarch()
    for flavour in DEBIAN_FLAVOURS:
        found.append(f"/usr/lib/{triplet}/{flavour}/libopenblas.so.0")
    dirs = library_dirs()
    found += [os.path.join(d, name) for d in dirs for name in OPENBLAS_NAMES]
    found += [os.path.join(d, name) for d in [*dirs, *MKL_DIRS] for name in MKL_NAMES]
    existing = [path for path in found if os.path.isfile(path)]
    # One file reached by several names (Debian's alternatives symlinks) is one candidate.
    unique: dict[str, str] = {}
    for path in existing:
        unique.setdefault(os.path.realpath(path), path)
    return list(unique.values())


def _family(path: str) -> str:
    name = os.path.basename(path)
    return "MKL" if "mkl" in name else "OpenBLAS" if "openblas" in name else name


def _load_global(path: str) -> str | None:
    """Loads `path` into the global symbol scope; the reason when it cannot."""
    try:
        # Opened locally first: a library without cblas_sgemm must not join the global
        # scope, where it could shadow other symbols for nothing.
        library = ctypes.CDLL(path, mode=os.RTLD_LOCAL)
    except OSError as error:
        message = str(error)
        return message.removeprefix(f"{path}: ") or "cannot be loaded"
    if not _has_symbol(library, SYMBOL):
        return f"it has no {SYMBOL}"
    ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)  # promotes the loaded library to global
    return None


def _has_symbol(library: ctypes.CDLL, name: str) -> bool:
    try:
        getattr(library, name)
    except AttributeError:
        return False
    return True


# ---------------------------------------------------------------------------
# The hint when mlx.core came first
# ---------------------------------------------------------------------------


def _hint_too_late(request: str | None) -> None:
    try:
        in_use = blas_in_use()
    except Exception:  # a broken mlx install: nothing to say about its BLAS
        return
    if request is not None:
        if _same_file(in_use, request):
            return
        wanted = request
    else:
        found = candidates()
        # A BLAS other than the bundled one is someone's deliberate choice (LD_PRELOAD).
        if not found or not is_bundled(in_use):
            return
        wanted = found[0]
    current = "its bundled BLAS" if is_bundled(in_use) else in_use
    _warn(
        f"mlx.core was imported before mlxir, so MLX's CPU matmuls use {current} instead of "
        f"{wanted}: import mlxir before mlx.core (MLXIR_BLAS=none silences this)"
    )


def _warn(message: str) -> None:
    """Warns at the line that imported mlxir, past mlxir's own frames. `warnings` skips
    importlib's frames itself, so they are passed over without being counted."""
    package = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    internal = {os.path.abspath(__file__), os.path.join(package, "__init__.py")}
    frame = sys._getframe(0)  # pyright: ignore[reportPrivateUsage] (CPython's documented frame accessor)
    level = 1
    while frame is not None:
        name = os.path.abspath(frame.f_code.co_filename)
        if "importlib" in name and "_bootstrap" in name:
            pass
        elif name in internal:
            level += 1
        else:
            break
        frame = frame.f_back
    warnings.warn(message, BlasWarning, stacklevel=level)


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.basename(a) == os.path.basename(b)


# ---------------------------------------------------------------------------
# Which library MLX calls
# ---------------------------------------------------------------------------


class _DlInfo(ctypes.Structure):
    _fields_ = [
        ("dli_fname", ctypes.c_char_p),
        ("dli_fbase", ctypes.c_void_p),
        ("dli_sname", ctypes.c_char_p),
        ("dli_saddr", ctypes.c_void_p),
    ]


class _PhdrInfo(ctypes.Structure):
    _fields_ = [
        ("dlpi_addr", ctypes.c_size_t),
        ("dlpi_name", ctypes.c_char_p),
        ("dlpi_phdr", ctypes.c_void_p),
        ("dlpi_phnum", ctypes.c_uint16),
    ]


_PHDR_CALLBACK = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(_PhdrInfo), ctypes.c_size_t, ctypes.c_void_p)


_libdl_handle: ctypes.CDLL | None = None


def _libdl() -> ctypes.CDLL:
    global _libdl_handle
    if _libdl_handle is not None:
        return _libdl_handle
    process = ctypes.CDLL(None)
    if not hasattr(process, "dladdr"):  # glibc before 2.34 keeps them in libdl
        process = ctypes.CDLL("libdl.so.2")
    process.dlsym.restype = ctypes.c_void_p
    process.dlsym.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
    process.dladdr.restype = ctypes.c_int
    process.dladdr.argtypes = [ctypes.c_void_p, ctypes.POINTER(_DlInfo)]
    _libdl_handle = process
    return process


def blas_in_use() -> str:
    """The file of the `cblas_sgemm` MLX's CPU matmul calls. Imports `mlx.core`.

    Read from libmlx's own relocation (the address its GOT holds), so a library loaded
    globally after `mlx.core`, which MLX never calls, is not reported; where that cannot
    be read (not Linux/ELF64), the loader's rule: the global scope, then mlx's own
    dependencies."""
    import mlx.core as mx

    bound = _bound_in_mlx(SYMBOL) if sys.platform.startswith("linux") else None
    return bound or _resolve_like_the_loader(SYMBOL, mx.__file__) or "unknown"


def _symbol_file(address: int) -> tuple[str, str] | None:
    """(file, symbol name) of the code at `address`."""
    info = _DlInfo()
    if not address or not _libdl().dladdr(ctypes.c_void_p(address), ctypes.byref(info)):
        return None
    return (info.dli_fname or b"").decode(errors="replace"), (info.dli_sname or b"").decode(errors="replace")


def _resolve_like_the_loader(symbol: str, module_file: str) -> str | None:
    libdl = _libdl()
    default = ctypes.c_void_p(-2 if sys.platform == "darwin" else 0)  # RTLD_DEFAULT
    address = libdl.dlsym(default, symbol.encode())
    if not address:
        # dlsym on a handle searches that object and its dependencies, breadth first.
        module = ctypes.CDLL(module_file, mode=os.RTLD_NOLOAD)
        address = libdl.dlsym(ctypes.c_void_p(module._handle), symbol.encode())
    found = _symbol_file(address or 0)
    return found[0] if found else None


def _loaded_objects() -> list[tuple[str, int]]:
    """(path, load bias) of every ELF object in the process."""
    objects: list[tuple[str, int]] = []

    def visit(info: ctypes._Pointer[_PhdrInfo], size: int, data: int | None) -> int:  # pyright: ignore[reportPrivateUsage] (typeshed's only name for a POINTER(T) instance)
        name = info.contents.dlpi_name
        if name:
            objects.append((name.decode(errors="replace"), int(info.contents.dlpi_addr)))
        return 0

    ctypes.CDLL(None).dl_iterate_phdr(_PHDR_CALLBACK(visit), None)
    return objects


def _bound_in_mlx(symbol: str) -> str | None:
    for path, bias in _loaded_objects():
        if not os.path.basename(path).startswith("libmlx"):
            continue
        try:
            slots = _relocation_slots(path, symbol)
        except (OSError, ValueError, IndexError):
            continue  # not an ELF64 file this parser reads: fall back to the loader's rule
        for slot in slots:
            address = ctypes.c_void_p.from_address(bias + slot).value
            found = _symbol_file(address or 0)
            # A lazy slot not yet bound points back into libmlx's PLT, not at the symbol.
            if found and found[1] == symbol:
                return found[0]
    return None


def _relocation_slots(path: str, symbol: str) -> list[int]:
    """The addresses (relative to the load bias) of the slots an ELF64 shared object's
    dynamic relocations fill with `symbol`, kept to those inside a loaded segment so
    that reading them cannot fault."""
    import struct

    with open(path, "rb") as file:
        header = file.read(64)
        if header[:4] != b"\x7fELF" or header[4] != 2:
            raise ValueError("not an ELF64 file")
        end = "<" if header[5] == 1 else ">"
        phoff, shoff = struct.unpack_from(end + "QQ", header, 0x20)
        phentsize, phnum, shentsize, shnum = struct.unpack_from(end + "HHHH", header, 0x36)

        def read(offset: int, size: int) -> bytes:
            file.seek(offset)
            return file.read(size)

        segments = [
            struct.unpack_from(end + "I4xQQ8x8xQ", read(phoff + i * phentsize, phentsize))
            for i in range(phnum)
        ]
        loaded = [(vaddr, vaddr + memsz) for kind, _, vaddr, memsz in segments if kind == 1]
        table = read(shoff, shentsize * shnum)
        sections: list[tuple[int, ...]] = [struct.unpack_from(end + "4xI8x8xQQI4x8xQ", table, i * shentsize) for i in range(shnum)]
        # (sh_type, sh_offset, sh_size, sh_link, sh_entsize)
        dynsym = next(i for i, s in enumerate(sections) if s[0] == 11)  # SHT_DYNSYM
        _, sym_offset, sym_size, strtab, sym_entsize = sections[dynsym]
        _, str_offset, str_size, _, _ = sections[strtab]
        names = read(str_offset, str_size)
        at = names.find(b"\0" + symbol.encode() + b"\0")
        if at < 0:
            return []
        symbols = read(sym_offset, sym_size)
        index = next(
            (i for i, (name,) in enumerate(struct.iter_unpack(end + "I" + "x" * (sym_entsize - 4), symbols))
             if name == at + 1),
            None,
        )
        if index is None:
            return []
        slots: list[int] = []
        for kind, offset, size, link, entsize in sections:
            if kind != 4 or link != dynsym:  # SHT_RELA against .dynsym
                continue
            for slot, info in struct.iter_unpack(end + "QQ" + "x" * (entsize - 16), read(offset, size)):
                if info >> 32 == index and any(lo <= slot <= hi - 8 for lo, hi in loaded):
                    slots.append(slot)
    return slots


def is_bundled(path: str) -> bool:
    """Whether `path` is one of the libraries that came with the mlx wheel (False while
    mlx.core is not imported: where the wheel lies is read from it)."""
    module = sys.modules.get("mlx.core")
    if module is None or not module.__file__:
        return False
    packages = os.path.dirname(os.path.dirname(os.path.realpath(module.__file__)))
    relative = os.path.relpath(os.path.realpath(path), packages)
    return not relative.startswith("..") and relative.split(os.sep)[0].startswith("mlx")


# ---------------------------------------------------------------------------
# Threads and a description
# ---------------------------------------------------------------------------


def thread_settings() -> dict[str, str]:
    """The BLAS thread variables ('unset' when not set) and the CPU counts."""
    settings = {name: os.environ.get(name, "unset") for name in THREAD_VARIABLES}
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    settings["cpus"] = f"{os.cpu_count()} ({usable} usable by this process)"
    return settings


def library_details(path: str) -> str | None:
    """What an OpenBLAS or MKL at `path` says of itself: its build and thread count."""
    try:
        library = ctypes.CDLL(path, mode=os.RTLD_NOLOAD)
    except OSError:
        return None
    if _has_symbol(library, "openblas_get_num_threads"):
        threads = library.openblas_get_num_threads()
        config = ""
        if _has_symbol(library, "openblas_get_config"):
            library.openblas_get_config.restype = ctypes.c_char_p
            config = (library.openblas_get_config() or b"").decode(errors="replace").strip()
        return f"{config or 'OpenBLAS'}, {threads} threads"
    if _has_symbol(library, "mkl_get_max_threads"):
        return f"MKL, {library.mkl_get_max_threads()} threads"
    return None
