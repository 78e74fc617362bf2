# Stage 4: size, read-time and ROOT/Parquet ratio tables (CSV, Markdown and HTML) with provenance.

# the tables that are also documents (Markdown + HTML, analysis.report.tables.write_doc)
TABLE_DOCS = ("size", "reads", "ratios", "formats")


rule resolved_config:
    """The config exactly as validated (defaults filled, --config overrides applied)."""
    output:
        f"{RESULTS}/config.yaml",
    log:
        f"{RESULTS}/logs/resolved_config.log",
    threads: 1
    conda:
        "../../envs/arrow.yaml"
    script:
        "../scripts/resolved_config.py"


rule tabulate:
    input:
        config=f"{RESULTS}/config.yaml",
        sizes=[study.size_path(RESULTS, f) for f in FILES],
        reads=[study.measurement_path(RESULTS, f) for f in MEASURED],
    output:
        # every table in the report as CSV (a download there), and the four with a Markdown
        # twin also as HTML, which the report shows inline
        tables=[
            report(
                f"{RESULTS}/tables/{t}.csv",
                caption=f"../report/table_{t}.rst",
                category="Tables",
                subcategory="Read and size study, CSV",
            )
            for t in ("size", "reads", "ratios", "formats", "groups", "repetitions")
        ]
        + [
            report(
                f"{RESULTS}/tables/{t}.html",
                caption=f"../report/table_{t}.rst",
                category="Tables",
                subcategory="Read and size study",
            )
            for t in TABLE_DOCS
        ]
        + [f"{RESULTS}/tables/{t}.md" for t in TABLE_DOCS],
        provenance=f"{RESULTS}/provenance.json",
    params:
        tables=lambda wc, output: os.path.dirname(output.tables[0]),
    log:
        f"{RESULTS}/logs/tabulate.log",
    threads: 1
    resources:
        **job_resources("tabulate"),
    conda:
        "../../envs/arrow.yaml"
    shell:
        "hepfmt tabulate --config {input.config} -o {params.tables} "
        "--provenance {output.provenance} --sizes {input.sizes} --reads {input.reads} "
        "> {log} 2>&1"
