# hepfmt: the two commands a user needs, each setting itself up on a fresh machine.
#   make run    create .venv (pinned: pyproject.toml + requirements.lock) and run the default study
#               (targets `all` and `metadata`: the read/size study and the metadata-cost study)
#   make report after `make run`: every figure and table of those targets in one HTML file
#   make bench  after `make run`: the harness's overhead over the bare library calls, per reader
#   make reference  after `make run`: copy its tables, plan.json, figures (PNG) and provenance to
#               results/reference/<cpu model>, the committed reference run of this CPU
#   make test   create .venv and run the test suite (lint: ruff, the import contracts, snakefmt and
#               snakemake --lint; the docs site's strict build; pytest);
#               .ci/run calls exactly this
#   make check  the fast inner loop while editing: make lint (ruff, import contracts, snakefmt,
#               snakemake --lint) and the tests not marked slow (no Snakemake run, no service,
#               no heavy ROOT fixture; tests/conftest.py says which are slow and why); within
#               minutes, no substitute for make test
#   make docs   the docs site (mkdocs.yml, docs/) into site/, --strict: a broken link or include fails
# Services (tools/services.sh: SLURM for the tests, XRootD and toxiproxy for the storage
# profiles; root and apt-get needed, else their tests skip) are set up only by the targets that
# use them: make test, make services, and make run TARGETS=storage.
# Targets come before --configfile, which takes every word after it (Snakemake 9).
# Variables: PYTHON (>= 3.11), CORES (snakemake --cores), CONFIG (a config file), VENV,
# TARGETS (Snakemake targets of run / dryrun / report), REPORT (the report's path).

PYTHON ?= python3
VENV ?= .venv
CORES ?= all
CONFIG ?= config/default.yaml
TARGETS ?= all metadata
REPORT ?= results/report.html
# Snakemake's report clips a view taller than the window (the landing's title): see the file
REPORT_CSS := workflow/report/stylesheet.css
BIN := $(VENV)/bin
# Jobs run `hepfmt` from PATH: the venv comes first, as `source .venv/bin/activate` would do
# (and Debian's daemon directories last: the SLURM and XRootD tests start daemons).
RUN := PATH="$(abspath $(BIN)):$$PATH:/usr/sbin:/sbin"
STAMP := $(VENV)/.hepfmt-installed

.PHONY: run report reference bench test lint docs dryrun clean-results

$(STAMP): pyproject.toml requirements.lock
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11) and "hepfmt needs Python >= 3.11 (set PYTHON=...)")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet --constraint requirements.lock --editable '.[test]'
	@# ROOT's compiled readers, built once per environment (~40 s of C++): at install, not
	@# inside the first jobs of a run (analysis/hepfmt/formats/root/backend.py compile_readers)
	$(BIN)/python -W ignore -c 'from hepfmt.formats.root.backend import READERS, root; root(READERS)'
	touch $@

# Snakemake runs the Python of a config file marked for YTE (its YAML templating) while it loads
# it, before the Snakefile could refuse it: a .pth line makes every Snakemake of the venv read
# config files as hepfmt does, plain YAML (analysis/hepfmt/plan/plainconfig.py).
PLAIN_CONFIGS := $(VENV)/.hepfmt-plain-configs
$(PLAIN_CONFIGS): $(STAMP) analysis/hepfmt/plan/plainconfig.py
	$(BIN)/python -m hepfmt.plan.plainconfig
	touch $@

# Snakemake imports every installed executor plugin when it starts, and the HTCondor plugin's
# bindings (htcondor2) then warn "CONDOR_CONFIG is unset ... Using /dev/null" on any machine
# without HTCondor, on every run. A .pth line in the venv ignores exactly that warning in every
# Python of the venv (snakemake however started, and its jobs); htcondor2 still falls back to
# /dev/null itself, and a machine with an HTCondor config never raised the warning.
QUIET_CONDOR := $(VENV)/.hepfmt-quiet-condor
$(QUIET_CONDOR): $(STAMP) $(PLAIN_CONFIGS)
	$(BIN)/python -c 'import pathlib, sysconfig; pathlib.Path(sysconfig.get_paths()["purelib"], "hepfmt-quiet-condor.pth").write_text("import warnings; warnings.filterwarnings(\"ignore\", message=\"The environment variable CONDOR_CONFIG is unset\", category=UserWarning)\n")'
	touch $@

# The services, once per .venv (delete the stamp to try again, e.g. after becoming root): only
# the targets that use one set them up (`make services` alone too). The default study (`all
# metadata`) needs none, so `make run` installs no system package; a run of the `storage` target
# serves files with XRootD behind toxiproxy, the tests start SLURM and XRootD.
SERVICES := $(VENV)/.hepfmt-services
$(SERVICES): $(STAMP)
	tools/services.sh $(VENV) slurm xrootd toxiproxy
	touch $@
.PHONY: services
services: $(SERVICES)
NEEDS_SERVICES := $(if $(filter storage,$(TARGETS)),$(SERVICES))

# A killed run resumes with the same command: --rerun-incomplete redoes the jobs it cut short;
# --nolock because the workflow locks the results directory itself (analysis/hepfmt/plan/lock.py),
# with a lock that dies with its process, where Snakemake's would need --unlock after a kill.
RESUME := --rerun-incomplete --nolock
# The config is checked by hepfmt before Snakemake reads it: Snakemake's own YAML loading (which
# runs before the Snakefile) recurses without bound on a self-containing mapping and takes
# minutes on a multi-MB value; check-config refuses those in one line naming the file or key.
CHECK := $(BIN)/hepfmt check-config $(CONFIG)

run: $(STAMP) $(QUIET_CONDOR) $(NEEDS_SERVICES)
	$(CHECK)
	$(RUN) $(BIN)/snakemake $(TARGETS) --cores $(CORES) $(RESUME) --configfile $(CONFIG)

report: $(STAMP) $(QUIET_CONDOR)
	$(CHECK)
	$(RUN) $(BIN)/snakemake $(TARGETS) --report $(REPORT) --report-stylesheet $(REPORT_CSS) --configfile $(CONFIG)

# After make run: hepfmt's harness next to the bare library calls on the formats table's files
# (results/bench/overhead.txt; a benchmark, not a test: it prints, it asserts nothing).
bench: $(STAMP) $(QUIET_CONDOR)
	$(RUN) $(BIN)/hepfmt bench overhead-study $(CONFIG) -o results/bench/overhead.txt

# After make run: how far the pair jobs' rounds land apart (results/bench/rounds.txt), then every
# pair job measured twice here, idle and then beside one CPU-bound process
# (results/bench/reproduce-idle.txt, reproduce-load1.txt; a benchmark: it reports how many ratios
# agree, it asserts nothing). JOBS=text keeps the jobs whose sample/pair/cNNN/selection holds it.
.PHONY: reproduce
reproduce: $(STAMP) $(QUIET_CONDOR)
	$(RUN) $(BIN)/hepfmt bench rounds results -o results/bench/rounds.txt
	$(RUN) $(BIN)/hepfmt bench reproduce $(CONFIG) $(if $(JOBS),--jobs '$(JOBS)') \
		-o results/bench/reproduce-idle.txt
	$(RUN) $(BIN)/hepfmt bench reproduce $(CONFIG) $(if $(JOBS),--jobs '$(JOBS)') --load 1 \
		-o results/bench/reproduce-load1.txt

# One reference run per CPU model (a read speed is a fact about a machine): results/reference/<cpu>
REF = results/reference/$$($(BIN)/python -c 'from hepfmt.provenance import cpu_slug; print(cpu_slug())')
reference:
	@test -f results/provenance.json || { echo "make reference: run 'make run' first"; exit 1; }
	ref=$(REF) && rm -rf $$ref && mkdir -p $$ref/figures $$ref/metadata/plots && \
	cp results/tables/*.csv results/tables/*.md results/provenance.json results/config.yaml \
		results/plan.json $$ref/ && \
	for f in results/tables/*-provenance.json results/bench/*.txt; do \
		if [ -f $$f ]; then cp $$f $$ref/; fi; done && \
	cp results/figures/*/*.png $$ref/figures/ && \
	if [ -d results/benchmarks ]; then cp -r results/benchmarks $$ref/; fi && \
	if [ -d results/metadata/tables ]; then \
		cp results/metadata/tables/*.csv results/metadata/tables/*.md \
			results/metadata/provenance.json $$ref/metadata/ && \
		cp results/metadata/plots/*.png $$ref/metadata/plots/; fi && \
	other=$$($(BIN)/python -c 'import sys; from hepfmt.report.answer.cpus import sibling; \
		print(sibling(sys.argv[1]) or "")' $$ref) && \
	$(BIN)/hepfmt answer --tables $$ref --source $$ref \
		$$(test -d $$ref/metadata && echo --metadata $$ref/metadata) \
		$${other:+--other-reference $$other} && \
	echo "make reference: $$ref"

dryrun: $(STAMP) $(QUIET_CONDOR) $(NEEDS_SERVICES)
	$(CHECK)
	$(RUN) $(BIN)/snakemake $(TARGETS) --cores $(CORES) --dry-run --configfile $(CONFIG)

lint: $(STAMP) $(QUIET_CONDOR)
	$(BIN)/ruff check .
	$(BIN)/lint-imports
	$(BIN)/snakefmt --check Snakefile workflow/
	$(BIN)/snakemake --lint --cores 1

# The docs site, built as a reader gets it: --strict turns a broken link, a missing snippet
# include (a generated table of results/reference/) or a missing figure into a failure.
# NO_MKDOCS_2_WARNING quiets the theme's banner about MkDocs' future, on every build.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet --site-dir site

# The fast inner loop: the lint that needs no Snakemake and the tests not marked slow (marked in
# their files or by tests/conftest.py: Snakemake runs, services, heavy ROOT fixtures). No
# services, no docs build; `make test` still runs everything.
.PHONY: check
# Tests on every core (pytest-xdist): a module's tests on one worker, with its fixtures; the
# modules that hold the machine's SLURM or loop devices one at a time (tests/conftest.py)
PYTEST = $(BIN)/python -m pytest -n auto --dist loadgroup

check: lint
	$(RUN) $(PYTEST) -m "not slow" -q

# A SLURM installed here must run, not skip (HEPFMT_REQUIRE_SLURM).
test: lint docs $(SERVICES)
	$(RUN) HEPFMT_REQUIRE_SLURM=$$(test -f $(VENV)/.hepfmt-slurm && echo 1) $(PYTEST)

clean-results:
	rm -rf results/sources results/files results/sizes results/measurements results/tables \
		results/logs results/config.yaml results/plan.json results/provenance.json
