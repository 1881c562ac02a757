# neomx developer commands.  `make test` and `make demo` set everything up on a fresh machine.
PYTHON ?= python3
VENV   ?= .venv
PY      = $(VENV)/bin/python
STAMP   = $(VENV)/.neomx-installed

.PHONY: test demo venv clean test-fast

$(PY):
	$(PYTHON) -m venv $(VENV)

$(STAMP): $(PY) pyproject.toml constraints-dev.txt
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -c constraints-dev.txt -e '.[test,demo]'
	touch $(STAMP)

venv: $(STAMP)

test: $(STAMP)
	$(PY) -m pytest tests

test-fast: $(STAMP)
	$(PY) -m pytest tests -m 'not slow'

demo: $(STAMP)
	MPLBACKEND=Agg $(PY) examples/mixed_programming.py --out-dir out

clean:
	rm -rf $(VENV) build *.egg-info out
