# The metadata-cost study: footer / header decode time and metadata size vs number of columns,
# for Parquet (three statistics levels), TTree and RNTuple. Its own target, not part of `all`:
#   snakemake --cores all metadata
# One job writes and verifies each wide file; one job per file times every implementation (each
# in a fresh process) and takes all of Snakemake's cores, so nothing runs beside a timing.
from hepfmt.plan import metagrid

META_CONFIG = config["metadata"]
META_FILES = metagrid.files(config)
META_HELPER = paths.meta_helper(RESULTS)
META_TABLES = ("metadata", "slopes", "repetitions")
META_PLOTS = ("decode_time", "metadata_size")
# How the report lists them: by these titles, not by their files' paths (report(labels=...))
META_TITLES = {
    "metadata": "Metadata cost",
    "slopes": "Metadata growth with the number of columns",
    "repetitions": "Every timed metadata decode",
    "decode_time": "Metadata decode time vs number of columns",
    "metadata_size": "Metadata size vs number of columns",
}

# What the wide files' wildcards may be: given to the rules that match them, never globally
META_WILDCARDS = {
    "dataset": r"(float32|string)-c\d+|nanoaod-[A-Za-z0-9_]+",
    "layout": r"parquet-(none|chunk|page)|ttree|rntuple",
    "ext": r"parquet|root",
}


rule metadata_write:
    input:
        lambda wc: metagrid.source_files(RESULTS, wc.dataset),
    output:
        data=paths.meta(RESULTS, "files"),
        layout=paths.meta(RESULTS, "layouts"),
    log:
        paths.log(RESULTS, "metadata_write"),
    wildcard_constraints:
        **META_WILDCARDS,
    conda:
        "../../envs/root.yaml"
    threads: 1
    resources:
        mem_mb=lambda wc: metagrid.write_mem_mb(config, wc.dataset, wc.layout),
        runtime=60,
    params:
        source=lambda wc, input: commands.flag("--source", input[:1]),
        codec=lambda wc: metagrid.codec(config, wc.layout),
        args=commands.metadata_write(config),
    shell:
        "hepfmt metadata write {wildcards.dataset:q} --layout {wildcards.layout:q} {params.args} "
        "--codec {params.codec:q} {params.source} -o {output.data:q} "
        "--layout-output {output.layout:q} > {log:q} 2>&1"


rule metadata_helper:
    """Build the optional arrow-rs decoder; records why not, never fails (see rusthelper)."""
    output:
        META_HELPER,
    log:
        paths.log(RESULTS, "metadata_helper"),
    conda:
        # hepfmt only: cargo, when the host has it, comes from the host's PATH
        "../../envs/arrow.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=30,
    shell:
        "hepfmt metadata build-helper -o {output:q} > {log:q} 2>&1"


rule metadata_time:
    input:
        data=paths.meta(RESULTS, "files"),
        layout=paths.meta(RESULTS, "layouts"),
        helper=lambda wc: (
            [META_HELPER]
            if "arrow-rs" in metagrid.implementations_of(config, wc.dataset, wc.layout)
            else []
        ),
    output:
        paths.meta(RESULTS, "timings"),
    log:
        paths.log(RESULTS, "metadata_time"),
    benchmark:
        paths.benchmark(RESULTS, "metadata_time")
    wildcard_constraints:
        **META_WILDCARDS,
    conda:
        "../../envs/root.yaml"
    threads: timing_threads(1)
    resources:
        mem_mb=4000,
        runtime=60,
    params:
        implementations=lambda wc: ",".join(
            metagrid.implementations_of(config, wc.dataset, wc.layout)
        ),
        helper=lambda wc, input: commands.flag("--rust-helper", input.helper),
        repetitions=META_CONFIG["repetitions"],
        budget=META_CONFIG["budget_s"],
        timeout=META_CONFIG["timeout_s"],
    shell:
        "hepfmt metadata time {input.data:q} --layout {input.layout:q} "
        "--implementations {params.implementations} --repetitions {params.repetitions} "
        "--budget-s {params.budget} {params.helper} --timeout {params.timeout} -o {output:q} "
        "> {log:q} 2>&1"


rule metadata_tabulate:
    input:
        config=paths.resolved_config(RESULTS),
        timings=[paths.meta(RESULTS, "timings", f) for f in META_FILES],
    output:
        tables=[
            report(
                paths.meta_table(RESULTS, t, "csv"),
                caption=f"../report/metadata_table_{t}.rst",
                category="Tables",
                subcategory="Metadata cost, CSV",
                labels={"title": META_TITLES[t]},
            )
            for t in META_TABLES
        ]
        + [
            report(
                paths.meta_table(RESULTS, "metadata", "html"),
                caption="../report/metadata_table_metadata.rst",
                category="Tables",
                subcategory="Metadata cost",
                labels={"title": META_TITLES["metadata"]},
            ),
            paths.meta_table(RESULTS, "metadata", "md"),
        ],
        plots=[
            report(
                paths.meta_plot(RESULTS, plot, "png"),
                caption=f"../report/metadata_{plot}.rst",
                category="Figures",
                subcategory="Metadata cost",
                labels={"title": META_TITLES[plot]},
            )
            for plot in META_PLOTS
        ]
        + [paths.meta_plot(RESULTS, plot, "pdf") for plot in META_PLOTS],
        provenance=paths.meta_provenance(RESULTS),
    log:
        paths.log(RESULTS, "metadata_tabulate"),
    localrule: True
    conda:
        "../../envs/arrow.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        tables=lambda wc, output: os.path.dirname(output.tables[0]),
        plots=lambda wc, output: os.path.dirname(output.plots[0]),
        config_name=CONFIG_NAME,
    shell:
        "hepfmt metadata tabulate --config {input.config:q} --timings {input.timings:q} "
        "-o {params.tables:q} --plots {params.plots:q} --provenance {output.provenance:q} "
        "--config-name {params.config_name:q} > {log:q} 2>&1"


# Target of the metadata-cost study (snakemake --cores all metadata).
rule metadata:
    input:
        rules.metadata_tabulate.output,
    localrule: True
