# Stage 4: size, read-time and ROOT/Parquet ratio tables (CSV, Markdown and HTML) with provenance,
# named in analysis/hepfmt/report/table_names.py (CSV: all of them; DOCUMENTS: also Markdown + HTML).
from hepfmt.report import table_names

# How the report lists each table: by this title, not by its file's path (report(labels=...)),
# the tables of every target (queries.smk and storage.smk use it too).
TABLE_TITLES = {
    table_names.SIZE: "Normalized size",
    table_names.READS: "Read times",
    table_names.RATIOS: "ROOT / Parquet ratios",
    table_names.PAIRS: "Paired reads, each side",
    table_names.FORMATS: "Formats side by side",
    table_names.SAMPLES: "Samples one by one",
    table_names.GROUPS: "Bytes per event by branch group",
    table_names.REPETITIONS: "Every timed repetition",
    table_names.ANSWER: "The answer, as text",
    table_names.QUERIES: "Analysis queries",
    table_names.STORAGE: "Storage profiles",
}
# The answer's place in the report (with the summary figure, figures.smk): the first category
ANSWER_CATEGORY = ("Answer", "This run")


# The config exactly as validated (defaults filled, --config overrides applied).
rule resolved_config:
    output:
        paths.resolved_config(RESULTS),
    log:
        paths.log(RESULTS, "resolved_config"),
    localrule: True
    conda:
        "../../envs/arrow.yaml"
    threads: 1
    script:
        "../scripts/resolved_config.py"


rule plan_record:
    """What tables and figures need of the study (labels, readers, pairings, selections): the
    report reads this record and never re-plans the study from the config."""
    input:
        config=paths.resolved_config(RESULTS),
    output:
        paths.plan_record(RESULTS),
    log:
        paths.log(RESULTS, "plan_record"),
    localrule: True
    conda:
        "../../envs/arrow.yaml"
    threads: 1
    shell:
        "hepfmt plan-record {input.config:q} -o {output:q} > {log:q} 2>&1"


rule tabulate:
    input:
        plan=paths.plan_record(RESULTS),
        sizes=[paths.size(RESULTS, f) for f in FILES],
        reads=[paths.measurement(RESULTS, f) for f in MEASURED],
        pairs=[paths.pair(RESULTS, j) for j in PAIRS],
    output:
        # every table in the report as CSV (a download there), and the four with a Markdown
        # twin also as HTML, which the report shows inline
        tables=[
            report(
                paths.table(RESULTS, t, "csv"),
                caption=f"../report/table_{t}.rst",
                category="Tables",
                subcategory="Read and size study, CSV",
                labels={"title": TABLE_TITLES[t]},
            )
            for t in table_names.CSV
        ]
        + [
            report(
                paths.table(RESULTS, t, "html"),
                caption=f"../report/table_{t}.rst",
                category="Tables",
                subcategory="Read and size study",
                labels={"title": TABLE_TITLES[t]},
            )
            for t in table_names.DOCUMENTS
        ]
        + [paths.table(RESULTS, t, "md") for t in table_names.DOCUMENTS],
        provenance=paths.provenance(RESULTS),
    log:
        paths.log(RESULTS, "tabulate"),
    localrule: True
    conda:
        "../../envs/arrow.yaml"
    threads: 1
    resources:
        **job_resources("tabulate"),
    params:
        tables=lambda wc, output: os.path.dirname(output.tables[0]),
    shell:
        "hepfmt tabulate --plan {input.plan:q} -o {params.tables:q} "
        "--provenance {output.provenance:q} --sizes {input.sizes:q} --reads {input.reads:q} "
        "--pairs {input.pairs:q} > {log:q} 2>&1"


# The run's answer, from its tables only (hepfmt answer; analysis/hepfmt/report/answer): what README,
# docs and the report's landing show. With tabulate.answer_metadata it waits for the metadata
# study's tables too (so target `all` runs that study), for the metadata cost at the run's width.
rule answer:
    input:
        tables=[
            paths.table(RESULTS, t, "csv")
            for t in (
                table_names.SIZE,
                table_names.READS,
                table_names.RATIOS,
                table_names.PAIRS,
            )
        ],
        provenance=paths.provenance(RESULTS),
        metadata=(
            [paths.meta_table(RESULTS, "metadata", "csv")]
            if config["tabulate"]["answer_metadata"]
            else []
        ),
    output:
        md=report(
            paths.table(RESULTS, table_names.ANSWER, "md"),
            caption="../report/table_answer.rst",
            category=ANSWER_CATEGORY[0],
            subcategory=ANSWER_CATEGORY[1],
            labels={"title": TABLE_TITLES[table_names.ANSWER]},
        ),
        json=paths.table(RESULTS, table_names.ANSWER, "json"),
    log:
        paths.log(RESULTS, "answer"),
    localrule: True
    conda:
        "../../envs/arrow.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        tables=lambda wc, input: os.path.dirname(input.tables[0]),
        metadata=lambda wc, input: (
            f"--metadata {shlex.quote(os.path.dirname(input.metadata[0]))}"
            if input.metadata
            else ""
        ),
    shell:
        "hepfmt answer --tables {params.tables:q} --provenance {input.provenance:q} "
        "{params.metadata} > {log:q} 2>&1"
