# Reads on storage profiles (the `storage` target, not part of `all`; docs/storage.md): on this VM the disk is cached by the host, so cold equals warm; here each file is
# read from the page cache, from an emulated throttled disk (cold, verified) and from an XRootD
# server behind a latency/bandwidth proxy, as measure.storage lists. Files: the zstd files of
# every format with readers marked on_storage by its adapter, of every measure.samples sample
# at the largest measured cluster size; readers: those (the compare readers rdf and pyarrow,
# TTreeReader and uproot, and polars and DuckDB, which read a URL through fsspec). Its table
# and figure carry the storage reads' own provenance. Each job first undoes what killed storage
# jobs left (analysis/hepfmt/measure/storage/ledger.py).
from hepfmt.report import table_names

STORAGE_FIGURES = [
    paths.figure(RESULTS, "storage", figures.FAMILIES["storage"].stem, ext)
    for ext in style.FILE_FORMATS
]
STORAGE_FILES = [
    f
    for f in FILES
    if study.storage_readers(config, f.format)
    and f.variant.startswith("zstd")
    and f.sample in study.measure_samples(config)
    and f.cluster_size
    == max(config["measure"].get("cluster_sizes") or config["cluster_sizes"])
]


rule storage_read:
    input:
        data=lambda wc: paths.written(RESULTS, study.spec_of(config, wc)),
        arrow=paths.source(RESULTS),
        meta=paths.source_meta(RESULTS),
    output:
        paths.storage(RESULTS),
    log:
        paths.log(RESULTS, "storage"),
    benchmark:
        paths.benchmark(RESULTS, "storage")
    wildcard_constraints:
        **GRID_WILDCARDS,
    conda:
        "../../envs/root.yaml"
    # like a read measurement: nothing runs beside it
    threads: timing_threads(1)
    resources:
        mem_mb=4000,
        runtime=lambda wc: max(10, config["measure"]["timeout_s"] // 60),
    params:
        readers=lambda wc: ",".join(study.storage_readers(config, wc.format)),
        adapter=lambda wc: study.adapter(config, wc.format),
        selections=lambda wc: commands.selections(config, wc.sample),
        profiles=",".join(config["measure"]["storage"]),
        repetitions=config["measure"]["repetitions"],
        min_repetitions=config["measure"]["min_repetitions"],
        precision=config["measure"]["precision"],
        budget=config["measure"]["budget_s"],
        timeout=config["measure"]["timeout_s"],
    shell:
        "hepfmt storage {input.data:q} --source {input.arrow:q} --format {params.adapter:q} "
        "--name {wildcards.format:q} --variant {wildcards.variant:q} "
        "--cluster-size {wildcards.cluster} --readers {params.readers:q} {params.selections} "
        "--profiles {params.profiles:q} --repetitions {params.repetitions} "
        "--min-repetitions {params.min_repetitions} --precision {params.precision} "
        "--budget-s {params.budget} --timeout {params.timeout} -o {output:q} > {log:q} 2>&1"


rule tabulate_storage:
    input:
        plan=paths.plan_record(RESULTS),
        storage=[paths.storage(RESULTS, f) for f in STORAGE_FILES],
    output:
        csv=report(
            paths.table(RESULTS, table_names.STORAGE, "csv"),
            caption="../report/table_storage.rst",
            category="Tables",
            subcategory="Storage profiles, CSV",
            labels={"title": TABLE_TITLES[table_names.STORAGE]},
        ),
        html=report(
            paths.table(RESULTS, table_names.STORAGE, "html"),
            caption="../report/table_storage.rst",
            category="Tables",
            subcategory="Storage profiles",
            labels={"title": TABLE_TITLES[table_names.STORAGE]},
        ),
        md=paths.table(RESULTS, table_names.STORAGE, "md"),
        ratios=paths.table(RESULTS, table_names.STORAGE_RATIOS, "csv"),
        provenance=paths.storage_provenance(RESULTS),
    log:
        paths.log(RESULTS, "tabulate_storage"),
    localrule: True
    conda:
        "../../envs/root.yaml"
    threads: 1
    params:
        tables=lambda wc, output: os.path.dirname(output.csv),
    shell:
        "hepfmt tabulate-storage --plan {input.plan:q} -o {params.tables:q} "
        "--provenance {output.provenance:q} --storage {input.storage:q} > {log:q} 2>&1"


rule storage:
    input:
        rules.tabulate_storage.output,
        STORAGE_FIGURES,
    localrule: True
