# Shared helpers: wildcard constraints, config lookups and job resources used by several stages.
import shlex

import yaml

from analysis.plan import resources as batch

# Every job can run `hepfmt`, whatever software environment it runs in: in the pip route it is
# the venv's entry point; in a conda environment (`--sdm conda`), which holds the dependencies
# but not this package, it is workflow/bin/hepfmt (last on PATH), importing this checkout.
shell.prefix(f"set -euo pipefail; export PATH=\"$PATH:{workflow.basedir}/workflow/bin\"; ")

# Jobs that take seconds run in the Snakemake process itself, never as batch jobs.
localrules:
    all,
    resolved_config,
    tabulate,
    metadata,
    metadata_tabulate,



# How every figure's provenance footer names the study: the config file(s) it was run with.
# (config_settings.config holds only --config KEY=VALUE; overwrite_config also holds the files)
_OVERRIDES = " + --config overrides" if workflow.config_settings.config else ""
CONFIG_NAME = f"{' + '.join(os.path.basename(f) for f in workflow.configfiles)}{_OVERRIDES}"


wildcard_constraints:
    sample=r"[A-Za-z0-9_]+",
    format=r"[a-z0-9_]+",
    variant=r"[a-z0-9+-]+",
    cluster=r"\d+",


def format_options(fmt):
    """Writer options from the config as repeated --option KEY=VALUE arguments (YAML values)."""
    opts = config["formats"][fmt].get("options", {})
    # shlex: a YAML-quoted string ('2.0') must reach the CLI with its quotes
    return " ".join(
        "--option " + shlex.quote(f"{k}={yaml.safe_dump(v, default_flow_style=True).strip()}")
        for k, v in opts.items()
    )


def selection_args():
    sels = config["measure"]["selections"]
    return " ".join(
        f"--selection '{name}={b if b == '*' else ','.join(b)}'" for name, b in sels.items()
    )


def sample_command(wc):
    """The hepfmt command line that makes one sample's source."""
    s = config["samples"][wc.sample]
    if "file" in s:
        return f"hepfmt import '{s['file']}' --tree {s.get('tree', 'Events')}"
    model = f"--model {config['model']}" if config["model"] else ""
    return (
        f"hepfmt generate --process {s['process']} --events {s['n_events']} "
        f"--seed {s.get('seed', 1)} {model}"
    )


def sample_inputs(wc):
    """Local files a sample is made from, so that a changed input remakes it."""
    s = config["samples"][wc.sample]
    path = s.get("file") or config["model"]
    return [path] if path and "://" not in path else []


def measured_file(wc):
    spec = study.spec(config, wc.sample, wc.format, wc.variant, int(wc.cluster))
    return study.file_path(RESULTS, spec)


def job_resources(rule):
    """Resources of every job of ``rule``, estimated from the config (analysis/resources.py).

    A batch system kills a job that asks too little and queues one that asks too much, so the
    figures follow each job's events, branches and cluster size. The HTCondor plugin reads
    neither mem_mb nor disk_mb, only its own keys in MB (summed like mem_mb in group jobs), so
    those are declared too; other executors ignore them.
    """

    def field(name):
        return lambda wc: getattr(batch.for_job(rule, config, wc), name)

    return {
        "mem_mb": field("mem_mb"),
        "disk_mb": field("disk_mb"),
        "runtime": field("runtime"),
        "htcondor_request_mem_mb": field("mem_mb"),
        "htcondor_request_disk_mb": field("disk_mb"),
    }


def measure_threads(wc):
    """All of Snakemake's cores on this machine or in a group job (so that nothing runs beside a
    timing); on a cluster without a core total the readers' threads, plus an exclusive node
    from the profile. ``workflow.cores`` cannot be used: it is undefined under a batch executor.
    """
    return batch.measure_threads(workflow.resource_settings.cores,
                                 max(study.thread_counts(config)))


# -- the metadata-cost study (workflow/rules/metadata.smk) --------------------------------------


def metadata_source(wc):
    """The sample (Arrow IPC + sidecar) a nanoaod-<sample> dataset is written from."""
    sample = metagrid.source_sample(wc.dataset)
    if sample is None:
        return []
    arrow = study.source_path(RESULTS, sample)
    return [arrow, arrow[: -len(".arrow")] + ".json"]


def metadata_codec(wc):
    fmt = wc.layout.split("-")[0]
    return META_CONFIG["codecs"][fmt]


def metadata_implementations(wc):
    return metagrid.implementations(config, metagrid.find(config, wc.dataset, wc.layout))


def metadata_write_mem_mb(wc):
    """ROOT holds a page or basket buffer per column while it fills (measured: ~1 GB peak for
    10000 string columns, TTree or RNTuple); Parquet needs less."""
    columns = metagrid.find(config, wc.dataset, wc.layout).columns or 2000
    return 500 + columns // 10


def metadata_timing_threads(wc):
    """Every core Snakemake has, so no other job disturbs a timing (1 where no total is known,
    as under a batch executor: its profile must ask for an exclusive node)."""
    return workflow.resource_settings.cores or 1
