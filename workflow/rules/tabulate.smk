# Stage 4: size, read-time and ROOT/Parquet ratio tables (CSV, Markdown and HTML) with provenance,
# named in analysis/report/table_names.py (CSV: all of them; DOCUMENTS: also Markdown + HTML).
from analysis.report import table_names


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
            )
            for t in table_names.CSV
        ]
        + [
            report(
                paths.table(RESULTS, t, "html"),
                caption=f"../report/table_{t}.rst",
                category="Tables",
                subcategory="Read and size study",
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
