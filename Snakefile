# hepfmt: ROOT vs Parquet (and friends) on NanoAOD-like data. Thin entry point: configuration
# and validation here, one rule file per stage in workflow/rules/.
from snakemake.utils import min_version

min_version("9.0")


# A --configfile names a whole study; Snakemake would deep-merge it into the default one (mixing
# their samples), so the default is loaded only when no config file is given.
if not workflow.overwrite_configfiles:

    configfile: "config/default.yaml"


# The config, checked by hepfmt's own code as `hepfmt check-config` checks it (the schema with
# its defaults, then the rules it cannot express): a config file read strictly (a key given
# twice, runaway YAML aliases, YTE templating), then every key, each refusal one line naming
# the key, exit 2. Snakemake in hepfmt's venv has read the file as hepfmt does already (plain
# YAML, no YTE code run: analysis/hepfmt/plan/plainconfig.py); any other Snakemake has run a YTE
# config's code by now, and this refuses it before any rule runs.
from hepfmt.plan import config as study_config  # noqa: E402

study_config.for_workflow(config, workflow.configfiles)


# snakemake --report results/report.html: the run's answer and summary figure first, then every
# figure and table, titled and captioned. The landing page includes the answer's Markdown and
# embeds the figure through analysis/hepfmt/report/report_rst.py, which registers its directive here.
report: "workflow/report/workflow.rst"


from hepfmt.report import report_rst  # noqa: E402,F401

# the study grid and every path of it
from hepfmt.plan import calibration, paths, scratch, study  # noqa: E402

RESULTS = config["results"]
FILES = study.files(config)
READ_PLAN = study.read_plan(config)  # file -> its readers
MEASURED = list(READ_PLAN)
PAIRS = study.pair_plan(config)  # the paired ROOT / Parquet measurements
PROOF_PLAN = study.proof_plan(config)  # file -> the readers convert proves on it
# the cost model fitted to this results directory's past jobs (their benchmark records)
FITS = calibration.fit(config)
KEEP_FILES = scratch.keep_files(config)  # else each written file goes after its reads
GATES = scratch.gates(config)  # file group -> the release its conversions wait for
GROUP_OUTPUTS = scratch.group_outputs(
    config
)  # file group -> the records made of its files


onstart:
    # One run per results directory, whatever its working directory, and none on a directory
    # above or inside a live run's; then remove what dead processes left there, never a live
    # one's (analysis/hepfmt/plan/lock.py). Not for dry runs, nor inside batch jobs.
    from hepfmt.plan import lock

    lock.hold(RESULTS)
    for _left in lock.remove_leftovers(RESULTS):
        print(f"removed {_left}, left by a killed job")


include: "workflow/rules/common.smk"
include: "workflow/rules/generate.smk"
include: "workflow/rules/convert.smk"
include: "workflow/rules/measure.smk"
include: "workflow/rules/tabulate.smk"
include: "workflow/rules/metadata.smk"
include: "workflow/rules/figures.smk"
include: "workflow/rules/queries.smk"
include: "workflow/rules/storage.smk"


rule all:
    default_target: True
    input:
        rules.tabulate.output,
        rules.answer.output,
        FIGURE_FILES,
        scratch.releases(config),
    localrule: True
