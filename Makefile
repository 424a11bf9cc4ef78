# Two commands do everything: `make run` and `make test`. Each bootstraps .venv.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# buf (proto lint) comes from npm, pinned by tools/buf/package-lock.json.
BUF := tools/buf/node_modules/.bin/buf

.PHONY: run test lint typecheck pytest bench clean proto

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

$(BUF): tools/buf/package.json tools/buf/package-lock.json
	npm ci --prefix tools/buf --no-audit --no-fund
	touch $(BUF)

run: $(STAMP)
	$(BIN)/rummy-dev

test: lint typecheck pytest

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports --no-logo

typecheck: $(STAMP)
	$(BIN)/mypy

pytest: $(STAMP) $(BUF)
	$(BIN)/pytest

bench: $(STAMP)
	$(BIN)/python -m bench.rules

# Regenerate services/common/pb from proto/ (commit the result).
proto: $(STAMP)
	$(BIN)/python -m scripts.gen_proto

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis tools/buf/node_modules
