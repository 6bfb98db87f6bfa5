# redolab: `make run` serves the dashboard, `make test` runs the whole suite.
# Both install what they need (uv, Python packages, front-end assets, the manual; `test` also the system
# packages: PostgreSQL, Chromium, OpenSSH, docker-compose, musl-tools for the static probe,
# iproute2 and ping for the lab)
# on a Debian-like machine.

PYTHON ?= python3
UV := $(PYTHON) -m uv
# uv trusts the system's certificate store, as pip does: behind a TLS-inspecting proxy its certificate is there
# (UV_SYSTEM_CERTS: the older name UV_NATIVE_TLS makes uv 0.13 print a deprecation warning on every call)
export UV_SYSTEM_CERTS ?= 1

.PHONY: run test lint format uv deps assets manual probe system-deps clean

run: deps assets manual probe
	$(UV) run redolab serve

# The installs overlap: apt-get (the system packages), uv (Python) and npm (front-end) fetch at once; the manual
# (MkDocs, from the Python packages) and the probe (static with musl-gcc, a system package) build once they are in.
test:
	$(MAKE) --no-print-directory -j3 system-deps deps assets
	$(MAKE) --no-print-directory -j2 manual probe
	./scripts/test.sh

lint:
	$(UV) run ruff check .
	$(UV) run ruff format --check .

format:
	$(UV) run ruff check --fix .
	$(UV) run ruff format .

# A Python that is "externally managed" (Debian's, PEP 668) refuses --user installs unless told: the first
# try's refusal is not printed, as the second one works around it.
uv:
	@$(UV) --version >/dev/null 2>&1 || $(PYTHON) -m pip install --user --quiet uv 2>/dev/null \
		|| $(PYTHON) -m pip install --user --quiet --break-system-packages uv

# Bytecode is compiled at install (and for redolab itself below): where PYTHONDONTWRITEBYTECODE is set
# (it is on this build machine), every `redolab` process would otherwise compile its imports (~3 s each).
deps: uv
	$(UV) sync --frozen --compile-bytecode
	$(UV) run python -m compileall -q backend/redolab > /dev/null

# htmx, swagger-ui and plotly.js's cartesian bundle (the trace types redolab draws, the version plotly.py
# writes figures for: tests/test_deployment.py compares them) from the npm registry, at build time.
assets: frontend/static/vendor/htmx.min.js

frontend/static/vendor/htmx.min.js: frontend/package.json frontend/package-lock.json frontend/build-assets.mjs
	cd frontend && npm ci --no-audit --no-fund --update-notifier=false --loglevel=error && npm run --silent --update-notifier=false build

# The manual (docs/, MkDocs with Material from the locked Python packages) into frontend/manual, which redolab
# serves at /manual/ to logged-in users. Its API and CLI pages are generated from the code
# (scripts/manual_reference.py), so it is built again when the package's source changes.
manual: frontend/manual/index.html

frontend/manual/index.html: mkdocs.yml scripts/manual_reference.py $(shell find docs backend/redolab -name '*.md' -o -name '*.py' 2>/dev/null)
	NO_MKDOCS_2_WARNING=1 $(UV) run mkdocs build --strict --quiet

probe:
	$(MAKE) -s -C backend/redolab/redoprobe redoprobe
	$(MAKE) -s -C backend/redolab/lab

system-deps:
	./scripts/system-deps.sh

clean:
	rm -rf .venv frontend/node_modules frontend/static/vendor frontend/manual
	$(MAKE) -s -C backend/redolab/redoprobe clean
	$(MAKE) -s -C backend/redolab/lab clean
