# Everything a fresh machine needs: `make demo` runs the main job, `make test` every test.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: venv demo test ruff pytest lit lint bench clean fbs

venv: $(STAMP)

# torch is pinned first: an unpinned torch pulls a multi-GB CUDA build.
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet "torch==2.13.0"
	$(BIN)/pip install --quiet -e ".[dev,llm,executorch]" "torch==2.13.0"
	touch $(STAMP)

demo: venv
	$(BIN)/mlxir demo

test: venv ruff pytest lit

pytest: venv
	$(BIN)/python -m pytest -q -n 2 tests

lit: venv
	$(BIN)/lit -v tests/filecheck

ruff: venv
	$(BIN)/ruff check .

lint: venv ruff
	$(BIN)/pyright

bench: venv
	$(BIN)/python benchmarks/ir_scale.py

# Regenerates codegen/fb/ (flatc bindings + layout table) from codegen/schema.fbs.
# Needs flatc (`apt-get install flatbuffers-compiler`); the output is checked in.
fbs: venv
	$(BIN)/python codegen/generate.py

clean:
	rm -rf $(VENV) build *.egg-info
