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

## Run the whole test suite against real PostgreSQL and Redis.
test: $(VENV)/.installed-dev
	bash .ci/ensure-services
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	DJANGO_SETTINGS_MODULE=config.settings.test DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres $(PY) manage.py makemigrations --check --dry-run
	$(VENV)/bin/pytest $(PYTEST_ARGS)

lint: $(VENV)/.installed-dev
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

fmt: $(VENV)/.installed-dev
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .
