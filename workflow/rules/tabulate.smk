# Stage 4: size, read-time and ROOT/Parquet ratio tables (CSV + Markdown) with provenance.


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
        sizes=[grid.size_path(RESULTS, f) for f in FILES],
        reads=[grid.measurement_path(RESULTS, f) for f in MEASURED],
    output:
        # the CSV tables in the report (the Markdown twins hold the same numbers)
        tables=[
            report(
                f"{RESULTS}/tables/{t}.csv",
                caption=f"../report/table_{t}.rst",
                category="Tables",
                subcategory="Read and size study",
            )
            for t in ("size", "reads", "ratios", "formats", "groups", "repetitions")
        ]
        + [f"{RESULTS}/tables/{t}.md" for t in ("size", "reads", "ratios", "formats")],
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
