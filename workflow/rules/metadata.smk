# The metadata-cost study: footer / header decode time and metadata size vs number of columns,
# for Parquet (three statistics levels), TTree and RNTuple. Its own target, not part of `all`:
#   snakemake --cores all metadata
# One job writes and verifies each wide file; one job per file times every implementation (each
# in a fresh process) and takes all of Snakemake's cores, so nothing runs beside a timing.
from analysis.plan import metagrid

metagrid.check(config)
META = metagrid.root(RESULTS)
META_FILES = metagrid.files(config)
META_CONFIG = config["metadata"]
META_HELPER = metagrid.helper_path(RESULTS)


wildcard_constraints:
    dataset=r"(float32|string)-c\d+|nanoaod-[A-Za-z0-9_]+",
    layout=r"parquet-(none|chunk|page)|ttree|rntuple",
    ext=r"parquet|root",


rule metadata_write:
    input:
        metadata_source,
    output:
        data=f"{META}/files/{{dataset}}/{{layout}}.{{ext}}",
        layout=f"{META}/layouts/{{dataset}}/{{layout}}.{{ext}}.json",
    params:
        source=lambda wc, input: f"--source {input[0]}" if input else "",
        codec=metadata_codec,
        options=" ".join(
            f"--option {k}={v}" for k, v in META_CONFIG["parquet_options"].items()
        ),
        shape=(
            f"--row-groups {META_CONFIG['row_groups']} "
            f"--rows-per-group {META_CONFIG['rows_per_group']} --seed {META_CONFIG['seed']}"
        ),
    log:
        f"{RESULTS}/logs/metadata/write/{{dataset}}/{{layout}}.{{ext}}.log",
    threads: 1
    resources:
        mem_mb=metadata_write_mem_mb,
        runtime=60,
    conda:
        "../../envs/root.yaml"
    shell:
        "hepfmt metadata write {wildcards.dataset} --layout {wildcards.layout} {params.shape} "
        "--codec '{params.codec}' {params.source} {params.options} -o {output.data} "
        "--layout-output {output.layout} > {log} 2>&1"


rule metadata_helper:
    """Build the optional arrow-rs decoder; records why not, never fails (see rusthelper)."""
    output:
        META_HELPER,
    log:
        f"{RESULTS}/logs/metadata/build-helper.log",
    threads: 1
    resources:
        mem_mb=2000,
        runtime=30,
    conda:
        # hepfmt only: cargo, when the host has it, comes from the host's PATH
        "../../envs/arrow.yaml"
    shell:
        "hepfmt metadata build-helper -o {output} > {log} 2>&1"


rule metadata_time:
    input:
        data=f"{META}/files/{{dataset}}/{{layout}}.{{ext}}",
        layout=f"{META}/layouts/{{dataset}}/{{layout}}.{{ext}}.json",
        helper=lambda wc: [META_HELPER] if "arrow-rs" in metadata_implementations(wc) else [],
    output:
        f"{META}/timings/{{dataset}}/{{layout}}.{{ext}}.json",
    params:
        implementations=lambda wc: ",".join(metadata_implementations(wc)),
        helper=lambda wc, input: f"--rust-helper {input.helper}" if input.helper else "",
        repetitions=META_CONFIG["repetitions"],
        budget=META_CONFIG["time_budget_s"],
        timeout=META_CONFIG["timeout_s"],
    log:
        f"{RESULTS}/logs/metadata/time/{{dataset}}/{{layout}}.{{ext}}.log",
    threads: metadata_timing_threads
    resources:
        mem_mb=4000,
        runtime=60,
    conda:
        "../../envs/root.yaml"
    shell:
        "hepfmt metadata time {input.data} --layout {input.layout} "
        "--implementations {params.implementations} --repetitions {params.repetitions} "
        "--budget {params.budget} {params.helper} --timeout {params.timeout} -o {output} "
        "> {log} 2>&1"


rule metadata_tabulate:
    input:
        config=f"{RESULTS}/config.yaml",
        timings=[metagrid.path(RESULTS, "timings", f) for f in META_FILES],
    output:
        tables=[
            report(
                f"{META}/tables/{t}.csv",
                caption=f"../report/metadata_table_{t}.rst",
                category="Tables",
                subcategory="Metadata cost, CSV",
            )
            for t in ("metadata", "slopes", "repetitions")
        ]
        + [
            report(
                f"{META}/tables/metadata.html",
                caption="../report/metadata_table_metadata.rst",
                category="Tables",
                subcategory="Metadata cost",
            ),
            f"{META}/tables/metadata.md",
        ],
        plots=[
            report(
                f"{META}/plots/{plot}.png",
                caption=f"../report/metadata_{plot}.rst",
                category="Figures",
                subcategory="Metadata cost",
            )
            for plot in ("decode_time", "metadata_size")
        ]
        + [f"{META}/plots/{plot}.pdf" for plot in ("decode_time", "metadata_size")],
        provenance=f"{META}/provenance.json",
    params:
        tables=lambda wc, output: os.path.dirname(output.tables[0]),
        plots=lambda wc, output: os.path.dirname(output.plots[0]),
        config_name=CONFIG_NAME,
    log:
        f"{RESULTS}/logs/metadata/tabulate.log",
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    conda:
        "../../envs/arrow.yaml"
    shell:
        "hepfmt metadata tabulate --config {input.config} --timings {input.timings} "
        "-o {params.tables} --plots {params.plots} --provenance {output.provenance} "
        "--config-name {params.config_name:q} > {log} 2>&1"


rule metadata:
    """Target of the metadata-cost study (snakemake --cores all metadata)."""
    input:
        rules.metadata_tabulate.output,
