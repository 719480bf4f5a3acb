# accord: the two commands a newcomer needs are `make demo` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
OUT    ?= build/compiled
# pytest's worker processes (pytest-xdist): one per core
WORKERS ?= auto
# pytest on WORKERS processes, each test file on one worker (a module's stand-ins and estates are
# set up once); bytecode written and read, even where PYTHONDONTWRITEBYTECODE is set, so neither
# the workers nor the commands the tests start compile accord anew
PYTEST := env -u PYTHONDONTWRITEBYTECODE $(BIN)/pytest -q -n $(WORKERS) --dist loadfile

.PHONY: demo live-demo test check lint format golden docs docs-site migrations sqlwords bench bench-live bench-bounds bench-sample bench-spark clean

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

# The live loop without an account, over `accord sandbox policies` (local Snowflake and
# Databricks stand-ins on loopback ports): deploy, drift, tamper, drift, repair, drift, probe
# --live; the sandbox stops with Ctrl-C at the end, or when the demo is interrupted
# (scripts/live_demo.py).
live-demo: $(BIN)/accord
	$(BIN)/python scripts/live_demo.py

# Lint (ruff) and the whole test suite: what CI runs (.ci/run). `ACCORD_FUZZ=1 make test` draws
# many more examples in the property tests.
test: $(BIN)/accord
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python -m compileall -q compiler targets tests scripts bench
	$(PYTEST)

# Lint and the fast tier, before every commit: every test but those marked slow (pyproject.toml:
# the end-to-end live runs, the wheel install, exhaustive word and seed lists, waits on deadlines).
check: $(BIN)/accord
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python -m compileall -q compiler targets tests scripts bench
	$(PYTEST) -m "not slow"

format: $(BIN)/accord
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

# Regenerate the golden files under tests/golden/ after an intended change of output.
golden: $(BIN)/accord
	$(BIN)/python -m tests.regen_golden

# Regenerate docs/rules.md and docs/lint.md's rule table from the lint rules, docs/policy-format.md
# from the model and docs/cli.md from the command definitions (a test fails when any is stale).
docs: $(BIN)/accord
	$(BIN)/python -m accord.compiler.lint.docs
	$(BIN)/python -m accord.compiler.reference

# Build the documentation site (mkdocs.yml: the guides and references under docs/) into site/,
# with --strict: a broken link or anchor fails (tests/test_docs_site.py builds it too).
docs-site: $(BIN)/accord
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

# Regenerate migrations/: the staged roll-out from examples/as-found/ to policies/. Planning the
# same base and head again rewrites that plan in place; tests fail while it is stale.
migrations: $(BIN)/accord
	$(BIN)/accord plan policies --base dir:examples/as-found --out migrations

# Regenerate targets/sqlwords.py (sqlglot's keywords and its parser's answers to the quoting
# question, read instead of loading the dialects) after sqlglot's pin changes; a test fails
# while it is stale (tests/test_sqlwords.py).
sqlwords: $(BIN)/accord
	$(BIN)/python -m accord.targets.sqlwords_build

bench: $(BIN)/accord
	$(BIN)/python bench/run.py

bench-live: $(BIN)/accord
	$(BIN)/python bench/live_bench.py

# The bounded work of probe sample (history rows) and gate test (agents): bench/bounds_bench.py.
bench-bounds: $(BIN)/accord
	$(BIN)/python bench/bounds_bench.py

# probe sample over a million queries of history on the stand-ins: bench/sample_bench.py.
bench-sample: $(BIN)/accord
	$(BIN)/python bench/sample_bench.py

# accord verify --engine spark|all: the Spark session's start and verify at 100 and 1,000
# datasets on each engine (bench/spark_bench.py)
bench-spark: $(BIN)/accord
	$(BIN)/python bench/spark_bench.py

clean:
	rm -rf $(VENV) build site
