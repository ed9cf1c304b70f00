# The two commands of the README: `make site` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PORT ?= 8000
STAMP := $(VENV)/.installed

.PHONY: site build test check benchmark clean

# Install what the site needs, build English and Chinese in parallel, serve on 127.0.0.1.
site: $(STAMP)
	$(BIN)/gpu-glossary serve --port $(PORT)

build: $(STAMP)
	$(BIN)/gpu-glossary build

check: $(STAMP)
	$(BIN)/gpu-glossary check

# Install what the tests need (Chromium from Debian's packages if missing) and run every test.
test: $(STAMP) chromium
	$(BIN)/python -m pytest

benchmark: $(STAMP)
	$(BIN)/python benchmarks/build_benchmark.py

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

.PHONY: chromium
chromium:
	@command -v chromium >/dev/null 2>&1 || { \
	  echo "Installing Chromium from Debian's packages…"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium >/dev/null; }

clean:
	rm -rf site .build
