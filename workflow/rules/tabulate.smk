# Stage 4: size, read-time and ROOT/Parquet ratio tables (CSV + Markdown) with provenance.


rule resolved_config:
    """The config exactly as validated (defaults filled, --config overrides applied)."""
    output:
        f"{RESULTS}/config.yaml",
    run:
        import yaml

        with open(output[0], "w") as f:
            yaml.safe_dump(config, f, sort_keys=False)


rule tabulate:
    input:
        config=f"{RESULTS}/config.yaml",
        sizes=[grid.size_path(RESULTS, f) for f in FILES],
        reads=[grid.measurement_path(RESULTS, f) for f in MEASURED],
    output:
        tables=multiext(
            f"{RESULTS}/tables/",
            *(f"{t}.{e}" for t in ("size", "reads", "ratios") for e in ("csv", "md")),
            "groups.csv",
            "repetitions.csv",
        ),
        provenance=f"{RESULTS}/provenance.json",
    log:
        f"{RESULTS}/logs/tabulate.log",
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    shell:
        "hepfmt tabulate --config {input.config} -o {RESULTS}/tables "
        "--provenance {output.provenance} --sizes {input.sizes} --reads {input.reads} "
        "> {log} 2>&1"
