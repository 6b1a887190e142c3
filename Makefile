# Two commands do everything on a fresh machine: `make report` and `make test`.
# Each sets up what it needs: a virtual environment, dependencies, a release build.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
export CARGO_TARGET_DIR ?= $(CURDIR)/target

RUST_SOURCES := $(shell find rust -name '*.rs' -o -name Cargo.toml) Cargo.toml
PY_DEPS := numpy pooch pytest hypothesis pytest-benchmark mypy ruff matplotlib psutil tqdm zstandard pyarrow scipy
# Peers to measure against; optional: tests and benchmarks skip where one is absent, except in
# CI (CI set, as .ci/run does), where a peer that does not install fails the run.
PEERS := libcachesim cachetools ciw simpy distributed

.PHONY: all report test lint test-rust test-python stubtest typecheck bench wheel clean vllm-peer sglang-peer mutants fuzz

all: test

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(VENV)/.deps: pyproject.toml Makefile | $(BIN)/python
	$(BIN)/pip install -q maturin $(PY_DEPS)
	$(BIN)/pip install -q $(PEERS) || { [ -z "$$CI" ] && echo "note: some peers ($(PEERS)) did not install; their tests and benchmarks will skip"; }
	touch $@

# Release build of the extension, installed into the venv (editable: python/ is on the path).
$(VENV)/.built: $(VENV)/.deps $(RUST_SOURCES) pyproject.toml
	rm -f $(VENV)/.built-test
	VIRTUAL_ENV=$(CURDIR)/$(VENV) PATH=$(CURDIR)/$(BIN):$$PATH $(BIN)/maturin develop --release -q
	touch $@

# `make test` builds the extension without fat LTO (and with 16 codegen units), in a target
# folder of its own: the same code and the same results (Rust does no fast math; LTO only
# changes what gets inlined), built minutes sooner on two cores. Wheels, benchmarks and the
# report keep the release profile's fat LTO. The wheel test builds with it too (same folder).
TEST_BUILD := CARGO_PROFILE_RELEASE_LTO=off CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 CARGO_TARGET_DIR=$(CURDIR)/target/test-build
$(VENV)/.built-test: $(VENV)/.deps $(RUST_SOURCES) pyproject.toml
	rm -f $(VENV)/.built
	$(TEST_BUILD) VIRTUAL_ENV=$(CURDIR)/$(VENV) PATH=$(CURDIR)/$(BIN):$$PATH $(BIN)/maturin develop --release -q
	touch $@

report: $(VENV)/.built
	$(BIN)/osbench report

test: vllm-peer sglang-peer lint test-rust test-python stubtest typecheck

# The serving engine's peer: the Python sources of vLLM 0.33.0's scheduler, unpacked once from its
# wheel (pip download) into $$OSBENCH_PEERS_DIR (default ~/.cache/osbench/peers). Offline it is
# skipped, and so are the fidelity tests. VLLM_WHEEL=path unpacks a wheel already on disk.
vllm-peer: $(VENV)/.built-test
	$(BIN)/python -m osbench.serve.vllm.peer fetch $(if $(VLLM_WHEEL),--wheel $(VLLM_WHEEL)) \
		|| echo "note: the vLLM peer was not fetched; tests/serve/test_vllm_fidelity.py will skip"

# The SGLang semantics' peer: the Python sources of SGLang 0.5.23's scheduling code, unpacked once
# from its wheel the same way. SGLANG_WHEEL=path unpacks a wheel already on disk.
sglang-peer: $(VENV)/.built-test
	$(BIN)/python -m osbench.serve.sglang.peer fetch $(if $(SGLANG_WHEEL),--wheel $(SGLANG_WHEEL)) \
		|| echo "note: the SGLang peer was not fetched; tests/serve/test_sglang_fidelity.py will skip"

# Lints are part of the tests: the tree stays clean under them, with no blanket ignores.
lint: $(VENV)/.deps
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	cargo fmt --all --check
	PYO3_PYTHON=$(CURDIR)/$(BIN)/python cargo clippy --workspace --all-targets -q -- -D warnings

test-rust:
	cargo test -p osbench-core -q

test-python: $(VENV)/.built-test
	$(TEST_BUILD) $(BIN)/python -m pytest -q --benchmark-disable

# Many more damaged files than the suite tries (not in CI): FUZZ_EXAMPLES per format and damage
# kind; the counts (the README's reliability table) are printed at the end.
FUZZ_EXAMPLES ?= 500
fuzz: $(VENV)/.built
	rm -f .fuzz-log.jsonl
	OSBENCH_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) OSBENCH_FUZZ_LOG=$(CURDIR)/.fuzz-log.jsonl \
		nice $(BIN)/python -m pytest tests/fuzz -q --benchmark-disable -p no:cacheprovider
	$(BIN)/python tests/fuzz/summarize.py .fuzz-log.jsonl

stubtest: $(VENV)/.built-test
	$(BIN)/python -m mypy.stubtest osbench._native

typecheck: $(VENV)/.built-test
	$(BIN)/python -m mypy python/osbench

bench: $(VENV)/.built
	mkdir -p bench-results
	$(BIN)/python -m pytest benches -q --benchmark-only --benchmark-json=bench-results/latest.json --benchmark-columns=min,median,mean,rounds
	$(BIN)/python benches/summarize.py bench-results/latest.json > bench-results/summary.md
	cat bench-results/summary.md

# Mutation testing: hours on two cores, so neither in `make test` nor in CI. Each run works on
# its own copy of the tree under $(MUTANTS_DIR): the bugs of the #17 audit planted one at a
# time, cargo-mutants over the core's areas (cache, sched and radix first) against `cargo test`
# alone, and mutmut over the reference engines and trace readers against the Python tests. The
# README's testing section records the scores and the survivors (tests/mutation/run.py).
MUTANTS_DIR ?= /tmp/osbench-mutants
MUTANTS_AREAS ?= cache sched radix mem serve
mutants: $(VENV)/.built
	command -v cargo-mutants >/dev/null || cargo install --locked cargo-mutants
	$(BIN)/pip install -q mutmut
	nice -n 19 $(BIN)/python tests/mutation/run.py --out $(MUTANTS_DIR) audit
	nice -n 19 $(BIN)/python tests/mutation/run.py --out $(MUTANTS_DIR) rust $(MUTANTS_AREAS)
	nice -n 19 $(BIN)/python tests/mutation/run.py --out $(MUTANTS_DIR) python

wheel: $(VENV)/.deps
	$(BIN)/maturin build --release -o dist

clean:
	rm -rf $(VENV) target dist report bench-results
