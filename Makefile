# The two commands of README.md: `make run` and `make test`.
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip

.PHONY: run test lint fmt migrations-check install install-dev

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip

$(VENV)/.installed-base: requirements/base.txt requirements/prod.txt | $(PY)
	$(PIP) install --quiet -r requirements/prod.txt
	touch $@

$(VENV)/.installed-dev: requirements/base.txt requirements/dev.txt $(VENV)/.installed-base
	$(PIP) install --quiet -r requirements/dev.txt
	touch $@

install: $(VENV)/.installed-base
install-dev: $(VENV)/.installed-dev

## Run Tidings in the foreground: embedded PostgreSQL and Redis unless DATABASE_URL / REDIS_URL
## name real ones, migrations, the demo, web (ASGI), a Celery worker and beat. Ctrl-C stops it all.
run: $(VENV)/.installed-base
	$(PY) manage.py run_all

## The whole test suite against real PostgreSQL and Redis: the machine's, the URLs given, or
## embedded ones when neither is installed (TIDINGS_EMBEDDED=1: always embedded).
test: $(VENV)/.installed-dev
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	PY=$(PY) bash .ci/ensure-services bash .ci/suite $(PYTEST_ARGS)

lint: $(VENV)/.installed-dev
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

fmt: $(VENV)/.installed-dev
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .
