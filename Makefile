# Everything a fresh machine with only Python needs: `make demo`, `make test`, `make bench`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test bench fuzz bench-paper bench-device bench-gpu bytecode clean

# --no-compile, then .ci/bytecode.py: the bytecode of the modules the project's processes
# import, not of all 60 packages' (10 s of CPU instead of 28 s on the CI machine)
$(STAMP): setup.cfg setup.py .ci/bytecode.py
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet --no-compile -e '.[test]'
	$(BIN)/python .ci/bytecode.py
	touch $(STAMP)

# bladec's bytecode, brought up to date (compileall skips what is): an editable install
# compiles nothing, and where PYTHONDONTWRITEBYTECODE is set (as on the CI machine)
# every process compiled bladec's 112 modules again, about 0.15 s of CPU per `bladec`
# run and per test worker (BENCHMARKS.md)
bytecode: $(STAMP)
	$(BIN)/python -m compileall -q bladec

# the main job on a real training step: its device peak under jax.jit, under bladec.jit with
# no limit and with a limit jit exceeds; the timeline picture in out/demo-timeline.png
demo: bytecode
	$(BIN)/python docs/demo.py

# two workers (pytest-xdist): CI has 2 cores; -n auto counts physical cores through
# psutil (1 on a VM with SMT, dozens on a workstation, each worker a JAX process of
# up to 3.5 GiB), so the count is stated. worksteal: the tests' costs are uneven (0.01 s
# to 30 s of CPU), and an idle worker takes half of the other's queue.
test: bytecode
	$(BIN)/python -m pytest -q -n 2 --dist worksteal

# everything marked slow: the benchmarks' goals, the whole fuzz and pair campaigns whose
# first cases `make test` runs (tests/fuzz/__init__.py lists them: the CLI fuzzer's, the
# two backends', the differential test's NumPy and JAX graphs; also the schedule's
# 240 random graphs, of which `make test` runs 60, and mlp-train's exact-schedule optimum,
# `make test` checking attention's), the acceptance-sized runs whose smaller smoke `make
# test` runs (the RSS check at 4x256 and 8x256, `make test` on the tiny model;
# test_device's Llama 8x256 acceptance, `make test` on the MLP step), the adjoints'
# further random draws, and the second models, samples and sizes of checks whose first
# `make test` keeps (issue 36; BENCHMARKS.md, "The test suite", lists what moved).
# Compiled as users' code is (XLA's default optimization level; `make test` compiles at
# level 0: tests/conftest.py)
bench: bytecode
	BLADEC_TEST_XLA_OPT=1 $(BIN)/python -m pytest -q -m slow -s

# the whole fuzz campaigns only (a part of `make bench`)
fuzz: bytecode
	$(BIN)/python -m pytest -q -m fuzz -n 2 --dist worksteal

bench-paper: bytecode
	$(BIN)/python benchmarks/bench_paper.py --out out/bench-paper.md

# device peak against step time (jax.jit, jax.checkpoint policies, bladec under limits)
bench-device: bytecode
	$(BIN)/python benchmarks/bench_device.py --out out/bench-device.md \
		--json out/bench-device.json --plot docs/pareto-device.png

# the allocator's peak against the limit on a GPU (exits 1 without one)
bench-gpu: bytecode
	$(BIN)/python benchmarks/bench_gpu.py --json out/bench-gpu.json

clean:
	rm -rf $(VENV) *.egg-info
