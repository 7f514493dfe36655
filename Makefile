# anonymatch — two commands: `make run` (main job on real data) and `make test` (all checks).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
export ANONYMATCH_DATA ?= $(abspath ../shared/datasets)

ADULT := $(ANONYMATCH_DATA)/adult/adult.data
ADULT_NAMES := age,workclass,fnlwgt,education,education-num,marital-status,occupation,relationship,race,sex,capital-gain,capital-loss,hours-per-week,native-country,income
## Roles: no column released unchanged gives a QI away (issue 25, `anonymatch.tables.risk.leakage`):
## education recodes education-num and fnlwgt is unique on its own (both dropped); relationship
## reveals marital-status and sex (a QI). The remaining kept columns leak < 1 % of the rows.
ADULT_QI := age,workclass,education-num,marital-status,occupation,relationship,race,sex,native-country
ADULT_IDS := fnlwgt,education
ADULT_OPTS := --names $(ADULT_NAMES) --qi $(ADULT_QI) --numeric age,education-num --na-values '?' --drop-missing

.PHONY: install peers run test lint typecheck pytest docs bench fuzz clean

$(BIN)/anonymatch: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev,bench,ui,docs,sql,stats,excel,spark,dp]'
	$(BIN)/anonymatch warmup --quiet  # compile numba's kernels now, not in the first run
	touch $@

install: $(BIN)/anonymatch

## Peer tools for the side-by-side benchmarks (benchmarks/_anjana.py). ANJANA pins exact
## versions of pandas/numpy/scipy, which would downgrade ours, so it is installed without them.
peers: install
	$(BIN)/pip install --quiet --no-deps 'anjana>=1.2' 'pycanon>=1.0' 'beartype>=0.16'

## Main job: anonymize UCI Adult at k = 10, verify, compare with the Mondrian baseline, risk figures.
## income is named sensitive with no model, so it gets distinct ℓ = 2 by default (issue 36): no
## person's candidate rows all show one income. verify --sensitive income checks that default
## from the release and the original alone; verify --manifest checks every claim of the manifest.
run: install
	mkdir -p out
	$(BIN)/anonymatch anonymize $(ADULT) -o out/adult_k10.csv --k 10 --sensitive income \
		--identifiers $(ADULT_IDS) --strict --report out/adult_k10.json --force $(ADULT_OPTS)
	$(BIN)/anonymatch anonymize $(ADULT) -o out/adult_k10_mondrian.csv --k 10 --method mondrian \
		--sensitive income --identifiers $(ADULT_IDS) --quiet --force $(ADULT_OPTS)
	$(BIN)/anonymatch verify $(ADULT) out/adult_k10.csv --k 10 --sensitive income $(ADULT_OPTS)
	$(BIN)/anonymatch verify $(ADULT) out/adult_k10.csv --manifest out/adult_k10.json
	$(BIN)/anonymatch evaluate $(ADULT) out/adult_k10.csv out/adult_k10_mondrian.csv $(ADULT_OPTS)
	$(BIN)/anonymatch risk $(ADULT) out/adult_k10.csv --k 10 --sensitive income $(ADULT_OPTS)

## All checks: lint, types, tests, the documentation site's strict build.
test: install lint typecheck pytest docs

lint:
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks

typecheck:
	$(BIN)/mypy

## On two workers (pytest-xdist): 331 -> 214 s in a fresh clone on a 2-core machine (issue
## 35). A test marked serial (a bound on seconds after a signal, or on a child's peak memory)
## runs while no other test runs (conftest.py). PYTEST_WORKERS=0: the suite in one process.
PYTEST_WORKERS ?= 2
pytest:
	$(BIN)/pytest -q -n $(PYTEST_WORKERS)

## The documentation site (mkdocs.yml: Material, the API from the docstrings by mkdocstrings),
## built strictly (any warning fails) into out/site; a few seconds. Not --quiet: it would hide the
## warnings from --strict too (mkdocs 1.6).
docs: install
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict -d out/site

## Fuzzing soak (issue 15): hostile inputs and options for every command, minutes; prints the
## cases tried, refusals and contract breaks per command (tally also in out/fuzz.json).
FUZZ_EXAMPLES ?= 150
fuzz: install
	mkdir -p out
	ANONYMATCH_FUZZ_SOAK=1 ANONYMATCH_FUZZ_RANDOM=1 ANONYMATCH_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) \
		ANONYMATCH_FUZZ_REPORT=out/fuzz.json $(BIN)/pytest -q -p no:randomly tests/fuzz
	$(BIN)/python benchmarks/fuzz_results.py out/fuzz.json $(FUZZ_EXAMPLES)

bench: install
	$(BIN)/python benchmarks/freeform_adult.py
	$(BIN)/python benchmarks/near_optimal.py
	$(BIN)/python benchmarks/adaptive_utility.py
	$(BIN)/python benchmarks/adaptive_attack.py
	$(BIN)/python benchmarks/adaptive_speed.py
	$(BIN)/python benchmarks/scale_tables.py
	$(BIN)/python benchmarks/speed_tables.py  # needs ../peers/Mondrian (see its docstring)

clean:
	rm -rf $(VENV) out .pytest_cache .mypy_cache .ruff_cache .hypothesis
