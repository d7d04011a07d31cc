# cabench: two commands on a fresh machine with Python 3 —
#   make test        set up .venv, lint (ruff, import layers, types), run the test suite
#   make reproduce   set up .venv, run every paper-scale experiment (and the beyond-the-paper ones, and those on
#                    the shipped real logs), draw the figures, write the report

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
# cabench's commands write their bytecode caches (into the project's .venv and cabench/__pycache__) even where the
# environment turns them off (PYTHONDONTWRITEBYTECODE): without them every command compiles pandas, matplotlib and
# cabench again, about 2 s of each command and of each worker process it starts.
CABENCH := PYTHONDONTWRITEBYTECODE= $(BIN)/cabench

PAPER_CONFIGS := gsm8k_online piqa_online gsm8k_psi piqa_psi gsm8k_psi_full piqa_psi_full \
                 gsm8k_psi_stochastic piqa_psi_stochastic
QUICK_CONFIGS := $(addsuffix _quick,$(PAPER_CONFIGS))
BEYOND_CONFIGS := gsm8k_psi_beyond piqa_psi_beyond gsm8k_psi_full_beyond piqa_psi_full_beyond \
                  synthetic_psi_beyond_l01 synthetic_psi_beyond_l03
REAL_CONFIGS := real/jhu_online real/jhu_psi

.PHONY: venv test test-fast mutation lint reproduce reproduce-quick bench surrogate demo-live clean

# The environment is installed by uv (itself installed by pip into the new venv), which fetches and unpacks
# the packages in parallel: on a fresh two-core machine 17 s against pip's 75 s for the same versions. uv reads
# no pip configuration: the indexes named by PIP_INDEX_URL, PIP_EXTRA_INDEX_URL and PIP_FIND_LINKS are passed
# on (a find-links folder that does not exist is left out, as pip ignores it). Where uv cannot be installed or
# fails, pip installs the same requirements.
UV_INDEXES := $(if $(PIP_INDEX_URL),--index-url $(PIP_INDEX_URL)) \
              $(foreach u,$(PIP_EXTRA_INDEX_URL),--extra-index-url $(u)) \
              $(foreach u,$(PIP_FIND_LINKS),$(if $(or $(findstring ://,$(u)),$(wildcard $(u))),--find-links $(u)))
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	( $(BIN)/python -m pip install --quiet --disable-pip-version-check uv \
	  && $(BIN)/uv pip install --quiet --python $(BIN)/python $(strip $(UV_INDEXES)) -e '.[dev]' ) \
	|| $(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	touch $(STAMP)

venv: $(STAMP)

lint: $(STAMP)
	$(BIN)/ruff check cabench tests scripts
	$(BIN)/lint-imports
	$(BIN)/mypy

# the suite in one worker process per core (pytest-xdist): every test writes only below its own tmp_path.
# Bytecode caches are written even where the environment turns them off (PYTHONDONTWRITEBYTECODE), so that
# the workers and the cabench processes the tests start compile each module once.
# Work stealing (--dist worksteal): each worker starts on its own half of the tests, in order, and takes tests
# queued for the other when it runs out. With xdist's default (tests dealt out in turn, then in chunks) one worker
# finished 7-8 s before the other, and the workers spent 213 s of CPU on the tests against 203 s (a module's
# tests were spread over both, each building its module-wide fixtures): the suite took 150.0-150.9 s against
# 159.5-161.7 s, back to back on one machine.
SUITE = $(if $(SUITE_TMP),TMPDIR=$(SUITE_TMP) )PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest -n auto --dist worksteal

# The suite's temporary folders go on the memory file system /dev/shm where it is writable with 2 GB free (a
# container's 64 MB /dev/shm is passed over), else where TMPDIR says. The suite writes about 400 MB there in some
# 26,000 atomic writes, each synced to disk (fsync): on a disk the syncs held the two workers about 13 s, a
# twentieth of the suite's wall time; on a memory file system a sync returns at once. pytest keeps the folders
# of failed tests only (tmp_path_retention_policy in pyproject.toml): a passing run leaves about 50 MB there.
SUITE_TMP = $(shell d=/dev/shm; [ -d $$d ] && [ -w $$d ] \
                && [ "$$(df -Pk $$d 2>/dev/null | awk 'NR == 2 {print $$4}')" -ge 2000000 ] 2>/dev/null && echo $$d)

# make test: ruff and the import layers first (a second), then mypy beside the suite, its report printed after
# the suite's: the suite leaves about an eighth of the two cores idle (waiting on the processes, servers and
# browsers its tests start), which mypy's dozen seconds of one core fill. Fails if either fails.
test: $(STAMP)
	$(BIN)/ruff check cabench tests scripts
	$(BIN)/lint-imports
	@log=$$(mktemp); $(BIN)/mypy >$$log 2>&1 & types=$$!; \
	$(SUITE); suite=$$?; \
	wait $$types; typed=$$?; echo "mypy:"; cat $$log; rm -f $$log; \
	exit $$(( suite != 0 || typed != 0 ))

test-fast: lint
	$(SUITE) -m "not slow"

mutation: $(STAMP)
	$(BIN)/python scripts/mutation.py

reproduce: $(STAMP)
	$(CABENCH) data table1 data/gsm8k data/piqa -o results/table1.csv
	$(CABENCH) run $(addprefix configs/,$(addsuffix .yaml,$(PAPER_CONFIGS) $(BEYOND_CONFIGS) $(REAL_CONFIGS)))
	$(CABENCH) plot results --n-jobs 2
	$(CABENCH) report results

reproduce-quick: $(STAMP)
	$(CABENCH) data table1 data/gsm8k data/piqa -o results-quick/table1.csv
	$(CABENCH) run --quiet $(addprefix configs/,$(addsuffix .yaml,$(QUICK_CONFIGS)))
	$(CABENCH) plot results-quick --n-jobs 2
	$(CABENCH) report results-quick

# Live evaluation against a local endpoint that answers as the PIQA logs did: start the server, run
# CoHV-UCB on it under a 400k-token budget (re-running resumes), stop the server.
DEMO_PORT ?= 8765
demo-live: $(STAMP)
	@$(CABENCH) serve data/piqa --port $(DEMO_PORT) & pid=$$!; \
	$(BIN)/python -c "import socket, time; any(socket.socket().connect_ex(('127.0.0.1', $(DEMO_PORT))) == 0 or time.sleep(0.2) for _ in range(150))"; \
	$(CABENCH) live configs/live/piqa_replay.yaml --base-url http://127.0.0.1:$(DEMO_PORT)/v1 --out live/piqa-demo; \
	status=$$?; kill $$pid; exit $$status

bench: $(STAMP)
	$(BIN)/python scripts/bench.py

surrogate: $(STAMP)
	$(BIN)/python scripts/make_surrogate_logs.py

clean:
	rm -rf results/*/ results/*.png results/*.pdf results/*.csv results/REPORT.md results/REPORT.html results/report_sections.json results-quick results-synthetic
