# Shared helpers: the grid's wildcard patterns and job resources used by several stages. Paths come from
# analysis/hepfmt/plan/paths.py, command-line fragments from analysis/hepfmt/plan/commands.py.
import os
import shlex
import sys

from snakemake.settings.types import DeploymentMethod

from hepfmt.plan import commands
from hepfmt.plan import resources as batch

# Every job can run `hepfmt`, whatever software environment it runs in and whatever PATH
# Snakemake was started with: in the pip route it is the entry point beside the Python that runs
# Snakemake (first on PATH: `.venv/bin/snakemake` works without an activated venv); in a conda
# environment (`--sdm conda`), which holds the dependencies but not this package, it is
# workflow/bin/hepfmt (last on PATH), importing this checkout.
_OWN_BIN = os.path.dirname(sys.executable)
_FIRST = (
    ""
    if DeploymentMethod.CONDA in workflow.deployment_settings.deployment_method
    or not os.path.exists(os.path.join(_OWN_BIN, "hepfmt"))
    else f"{_OWN_BIN}:"
)
shell.prefix(
    f'set -euo pipefail; export PATH="{_FIRST}$PATH:{workflow.basedir}/workflow/bin"; '
)

# Jobs that take seconds run in the Snakemake process itself, never as batch jobs: each of those
# says `localrule: True` itself.

# How every figure's provenance footer names the study: the config file(s) it was run with.
# (config_settings.config holds only --config KEY=VALUE; overwrite_config also holds the files)
_OVERRIDES = " + --config overrides" if workflow.config_settings.config else ""
CONFIG_NAME = (
    f"{' + '.join(os.path.basename(f) for f in workflow.configfiles)}{_OVERRIDES}"
)


# What the study grid's wildcards may be (paths.STEM): given to the rules that match them, never
# globally (as META_WILDCARDS for the metadata study's files)
GRID_WILDCARDS = {
    "sample": r"[A-Za-z0-9_]+",
    "format": r"[a-z0-9_]+",
    "variant": r"[a-z0-9+-]+",
    "cluster": r"\d+",
}


def job_resources(rule):
    """Resources of every job of ``rule``, estimated from the config (analysis/hepfmt/plan/resources.py).

    A batch system kills a job that asks too little and queues one that asks too much, so the
    figures follow each job's events, branches, cluster size and readers. The HTCondor plugin
    reads neither mem_mb nor disk_mb, only its own keys in MB (summed like mem_mb in group
    jobs), so those are declared too; other executors ignore them.
    """

    def field(name):
        return lambda wc: getattr(
            batch.for_job(rule, config, wc, READ_PLAN, PROOF_PLAN, FITS), name
        )

    return {
        "mem_mb": field("mem_mb"),
        "disk_mb": field("disk_mb"),
        "runtime": field("runtime"),
        "htcondor_request_mem_mb": field("mem_mb"),
        "htcondor_request_disk_mb": field("disk_mb"),
        # a timing job on the partition / node feature the config pins them to (one CPU model)
        **batch.timing_placement(rule, config),
    }


def timing_threads(reader_threads):
    """Threads of a timing job: all of Snakemake's cores on this machine or in a group job (so
    that nothing runs beside a timing); on a cluster without a core total the timed code's own
    threads, plus an exclusive node from the profile. Evaluated per job: ``workflow.cores`` is
    undefined under a batch executor.
    """
    return lambda wc: batch.measure_threads(
        workflow.resource_settings.cores, reader_threads
    )


def pair_job(wc):
    """The pair job (study.PairJob) a `pair` job's wildcards name."""
    return study.pair_job_of(config, wc, READ_PLAN)
