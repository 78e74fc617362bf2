# Analysis queries as a read workload (the `queries` target, not part of `all`): the eight
# IRIS-HEP ADL benchmark tasks timed on one file per sample and format (study.queries) through
# every engine that reads it, each (file, engine) in its own process, every answer checked
# against the reference answers, computed once per sample from its source. Then the queries
# tables (per task the best-ROOT / best-Parquet ratio, the time to the first histogram) and
# figures, with their own provenance: the target needs none of the read study.
from hepfmt.report import table_names

QUERY_PLAN = study.queries(config)  # file -> its engines
QUERY_TASKS = ",".join(map(str, study.query_tasks(config)))
QUERY_FIGURES = [
    paths.figure(RESULTS, name, fam.stem, ext)
    for name, fam in figures.FAMILIES.items()
    if fam.target == "queries"
    for ext in style.FILE_FORMATS
]


rule query_reference:
    input:
        arrow=paths.source(RESULTS),
        meta=paths.source_meta(RESULTS),
    output:
        paths.query_reference(RESULTS),
    log:
        paths.log(RESULTS, "query_reference"),
    wildcard_constraints:
        sample=GRID_WILDCARDS["sample"],
    conda:
        "../../envs/root.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=30,
    params:
        tasks=QUERY_TASKS,
    shell:
        "hepfmt query-reference {input.arrow:q} --tasks {params.tasks} -o {output:q} "
        "> {log:q} 2>&1"


rule query:
    input:
        data=lambda wc: paths.written(RESULTS, study.spec_of(config, wc)),
        arrow=paths.source(RESULTS),
        meta=paths.source_meta(RESULTS),
        reference=paths.query_reference(RESULTS),
    output:
        paths.query(RESULTS),
    log:
        paths.log(RESULTS, "query"),
    benchmark:
        paths.benchmark(RESULTS, "query")
    wildcard_constraints:
        **GRID_WILDCARDS,
    conda:
        "../../envs/root.yaml"
    # like a read measurement: nothing runs beside it
    threads: timing_threads(study.thread_counts(config)[0])
    resources:
        # one engine process at a time: ROOT's start-up plus one task's arrays of one file
        mem_mb=4000,
        runtime=lambda wc: max(10, config["measure"]["timeout_s"] // 60),
    params:
        engines=lambda wc: ",".join(QUERY_PLAN[study.spec_of(config, wc)]),
        tasks=QUERY_TASKS,
        adapter=lambda wc: study.adapter(config, wc.format),
        modes=",".join(config["measure"]["modes"]),
        repetitions=config["measure"]["repetitions"],
        threads=study.thread_counts(config)[0],
        scheduler=commands.flag(
            "--dask-scheduler",
            (
                [config["measure"]["dask_scheduler"]]
                if config["measure"]["dask_scheduler"]
                else []
            ),
        ),
        timeout=config["measure"]["timeout_s"],
    shell:
        "hepfmt query {input.data:q} --source {input.arrow:q} --reference {input.reference:q} "
        "--format {params.adapter:q} --name {wildcards.format:q} "
        "--variant {wildcards.variant:q} --cluster-size {wildcards.cluster} "
        "--engines {params.engines:q} --tasks {params.tasks} --modes {params.modes:q} "
        "--repetitions {params.repetitions} --threads {params.threads} {params.scheduler} "
        "--timeout {params.timeout} -o {output:q} > {log:q} 2>&1"


rule tabulate_queries:
    input:
        plan=paths.plan_record(RESULTS),
        queries=[paths.query(RESULTS, f) for f in QUERY_PLAN],
    output:
        csv=report(
            paths.table(RESULTS, table_names.QUERIES, "csv"),
            caption="../report/table_queries.rst",
            category="Tables",
            subcategory="Analysis queries, CSV",
            labels={"title": TABLE_TITLES[table_names.QUERIES]},
        ),
        html=report(
            paths.table(RESULTS, table_names.QUERIES, "html"),
            caption="../report/table_queries.rst",
            category="Tables",
            subcategory="Analysis queries",
            labels={"title": TABLE_TITLES[table_names.QUERIES]},
        ),
        md=paths.table(RESULTS, table_names.QUERIES, "md"),
        ratios=paths.table(RESULTS, table_names.QUERY_RATIOS, "csv"),
        first=paths.table(RESULTS, table_names.QUERY_FIRST, "csv"),
        provenance=paths.query_provenance(RESULTS),
    log:
        paths.log(RESULTS, "tabulate_queries"),
    localrule: True
    conda:
        "../../envs/root.yaml"
    threads: 1
    params:
        tables=lambda wc, output: os.path.dirname(output.csv),
    shell:
        "hepfmt tabulate-queries --plan {input.plan:q} -o {params.tables:q} "
        "--provenance {output.provenance:q} --queries {input.queries:q} > {log:q} 2>&1"


# Target: the queries' tables and their figures (drawn by figures.smk's rule for every family).
rule queries:
    input:
        rules.tabulate_queries.output,
        QUERY_FIGURES,
    localrule: True
