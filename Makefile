# accord: the two commands a newcomer needs are `make demo` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
OUT    ?= build/compiled

.PHONY: demo test lint format golden docs migrations bench bench-live clean

$(BIN)/accord: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@touch $(BIN)/accord

# Compile the reference estate in policies/, print what was written, prove on DuckDB that the
# compiled SQL means what the model says, show what every surface answers per persona, and
# check the governance team's probes (policies/probes.yaml) against the model.
demo: $(BIN)/accord
	$(BIN)/accord validate policies
	$(BIN)/accord lint policies
	$(BIN)/accord compile policies --out $(OUT) --target all
	@for f in $$(cd $(OUT) && find . -type f -name '*.sql' | sort); do echo "-- ===== $(OUT)/$${f#./} ====="; cat "$(OUT)/$${f#./}"; echo; done
	$(BIN)/accord verify policies --compiled $(OUT)
	$(BIN)/accord analyze policies --format markdown
	$(BIN)/accord probe policies

# Lint (ruff) and the whole test suite.
test: $(BIN)/accord
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/pytest -q

format: $(BIN)/accord
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

# Regenerate the golden files under tests/golden/ after an intended change of output.
golden: $(BIN)/accord
	$(BIN)/python -m tests.regen_golden

# Regenerate docs/rules.md and the README's rule table from the lint rules (a test fails when
# either is stale).
docs: $(BIN)/accord
	$(BIN)/python -m compiler.lint.docs

# Regenerate migrations/: the staged roll-out from examples/as-found/ to policies/. Planning the
# same base and head again rewrites that plan in place; tests fail while it is stale.
migrations: $(BIN)/accord
	$(BIN)/accord plan policies --base examples/as-found --out migrations

bench: $(BIN)/accord
	$(BIN)/python bench/run.py

bench-live: $(BIN)/accord
	$(BIN)/python bench/live_bench.py

clean:
	rm -rf $(VENV) build
