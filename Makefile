# Everything a fresh machine needs: `make demo` runs the main job, `make test` every test.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: venv zoo-packages blas chromium mpi demo test ruff pyright pytest lit lint bench clean fbs op-rules native native-sanitized

# `make demo` sets up only what the demo needs (the `llm` extra, and the system BLAS that
# makes MLX's CPU matmuls fast); `make test` adds what the tests need, each listed with
# its reason in README.md.
venv: blas chromium mpi $(STAMP) zoo-packages

# torchvision and timm for the model zoo's tests only, in a folder of their own that only
# tests/zoo/vision_packages.py puts on sys.path: PyPI's torchvision is built for CUDA
# torch and, seen by the main venv, breaks `import transformers` (docs/models.md).
ZOO_PACKAGES := build/zoo-packages
ZOO_PINS     := torchvision==0.28.0 timm==1.0.31 pillow==13.0.0
zoo-packages: $(ZOO_PACKAGES)/.installed
$(ZOO_PACKAGES)/.installed: Makefile $(STAMP)
	rm -rf $(ZOO_PACKAGES)
	$(BIN)/pip install --quiet --no-deps --target $(ZOO_PACKAGES) $(ZOO_PINS)
	touch $@

# $(call best_effort_apt,NAME,PACKAGE,WHY,WITHOUT_IT): installs a Debian package with
# apt-get where the machine has it, never an error: sudo only when not root, and
# without a terminal it may not ask for a password (-n). The texts take no commas.
define best_effort_apt
if ! command -v apt-get >/dev/null 2>&1; then \
	echo "$(1): no apt-get here: install $(2) with the system's package manager ($(3))"; exit 0; fi; \
if [ "$$(id -u)" = 0 ]; then sudo=""; \
elif ! command -v sudo >/dev/null 2>&1; then \
	echo "$(1): not root and no sudo: run 'apt-get install $(2)' as root ($(3))"; exit 0; \
elif [ -t 0 ]; then sudo="sudo"; else sudo="sudo -n"; fi; \
echo "$(1): installing $(2) ($(3))"; \
if $$sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
   $$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(2) >/dev/null; then :; \
else echo "$(1): could not install $(2) (see above): $(4)"; fi
endef

# MLX's Linux wheel bundles a reference BLAS about 40x slower than OpenBLAS, which
# `import mlxir` loads when it is installed (docs/blas.md).
blas:
	@if [ "$$(uname -s)" != Linux ]; then exit 0; fi; \
	if dpkg-query -W -f='$${Status}' libopenblas0-pthread 2>/dev/null | grep -q "ok installed"; then exit 0; fi; \
	$(call best_effort_apt,blas,libopenblas0-pthread,MLX's bundled BLAS is slow: docs/blas.md,MLX keeps its bundled BLAS)

# tests/test_graph_view.py opens Model Explorer's page in headless Chromium (Debian's
# `chromium`) and skips that one test where none is found.
chromium:
	@if [ "$$(uname -s)" != Linux ]; then exit 0; fi; \
	for b in chromium chromium-browser google-chrome google-chrome-stable; do \
		if command -v $$b >/dev/null 2>&1; then exit 0; fi; done; \
	$(call best_effort_apt,chromium,chromium,the Model Explorer page test,the page test will skip)

# MLX's MPI backend (docs/distributed.md): Open MPI's mpirun and libmpi. The ring
# backend, the default, needs nothing; tests/test_distributed.py runs the MPI case
# where mpirun is found.
mpi:
	@if [ "$$(uname -s)" != Linux ]; then exit 0; fi; \
	if command -v mpirun >/dev/null 2>&1; then exit 0; fi; \
	$(call best_effort_apt,mpi,openmpi-bin libopenmpi-dev,MLX's MPI backend,launches use the ring backend only)

# torch is pinned first: an unpinned torch pulls a multi-GB CUDA build.
DEMO_STAMP := $(VENV)/.installed-demo
$(DEMO_STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet "torch==2.13.0"
	$(BIN)/pip install --quiet -e ".[llm]" "torch==2.13.0"
	touch $@

$(STAMP): $(DEMO_STAMP)
	$(BIN)/pip install --quiet -e ".[dev,llm,executorch,model-explorer]" "torch==2.13.0"
	touch $(STAMP)

demo: blas $(DEMO_STAMP)
	$(BIN)/mlxir demo

# The checks that are not pytest run side by side (pyright uses one core, lit two),
# then pytest, which keeps both cores busy on its own.
test: venv
	$(MAKE) --no-print-directory -j3 --output-sync=target ruff pyright lit native-sanitized
	$(MAKE) --no-print-directory pytest

# The native kernels (docs/native-kernels.md): `pip install` builds them once; after a
# change to native/ this rebuilds them in place, in a CMake folder kept for the next
# change (a few seconds a file).
NATIVE_BUILD := build/native
NATIVE_SO    := native/_kernels$(shell $(PYTHON) -c "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))")
native: $(NATIVE_SO)
$(NATIVE_SO): native/CMakeLists.txt $(wildcard native/kernels/*) | $(STAMP)
	cmake -S native -B $(NATIVE_BUILD) -DPython_EXECUTABLE=$(abspath $(BIN)/python) -DCMAKE_BUILD_TYPE=Release -DMLXIR_ONLY= >/dev/null
	cmake --build $(NATIVE_BUILD) -j2
	cp $(NATIVE_BUILD)/_kernels*.so $@

# The native kernel tests once more, the kernels built with AddressSanitizer and
# UndefinedBehaviorSanitizer (Python itself is not: the sanitizers' runtimes are
# preloaded): a read or write outside an array, or undefined behaviour, fails the run.
NATIVE_ASAN := build/native-asan
native-sanitized: venv
	cmake -S native -B $(NATIVE_ASAN) -DPython_EXECUTABLE=$(abspath $(BIN)/python) -DMLXIR_SANITIZE=ON -DMLXIR_ONLY= >/dev/null
	cmake --build $(NATIVE_ASAN) -j2 >/dev/null
	LD_PRELOAD="$$(g++ -print-file-name=libasan.so) $$(g++ -print-file-name=libubsan.so)" \
	ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1 \
	MLXIR_NATIVE_LIBRARY="$$(ls $(NATIVE_ASAN)/_kernels*.so)" MLXIR_NATIVE_SANITIZED=1 \
	$(BIN)/python -m pytest -q -p no:cacheprovider -m "not whole_program" tests/test_native_*.py

# loadgroup: a file marked with an xdist_group runs on one worker, so the programs its
# tests share are compiled once, not once per worker.
pytest: venv native
	$(BIN)/python -m pytest -q -n 2 --dist loadgroup --durations=25 tests

lit: venv
	$(BIN)/lit -v tests/filecheck

ruff: venv
	$(BIN)/ruff check .

pyright: venv
	$(BIN)/pyright

lint: venv ruff pyright

bench: venv
	$(BIN)/python benchmarks/ir_scale.py

# Regenerates codegen/fb/ (flatc bindings + layout table) from codegen/schema.fbs.
# Needs flatc (`apt-get install flatbuffers-compiler`); the output is checked in.
fbs: venv
	$(BIN)/python codegen/generate.py

clean:
	rm -rf $(VENV) build *.egg-info

# Regenerates codegen/op_rules.py (each op's structural rule, which the runtime reads
# instead of the dialects) after an op is added or changed.
op-rules: venv
	$(BIN)/python -m mlxir.codegen.ops
