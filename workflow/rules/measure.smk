# Stage 3: timed reads. A measure job times every reader of one file of the measure sub-grid
# (study.read_plan) in every cache mode; a pair job times one ROOT / Parquet pairing on one sample
# at one cluster size and selection (study.pair_plan): both files in one job, their reads
# interleaved, so that the ratio's two sides see the same machine. Either takes every core
# Snakemake has (on a cluster: an exclusive node, from the profile), so no other job (a
# conversion, another measurement) runs beside it and skews its timings; each reader runs in its
# own fresh process. Selections come resolved against the sample's own branches
# (analysis/hepfmt/plan/selections.py: MET_pt or PFMET_pt, nJet or nJet_pt).


rule measure:
    input:
        data=lambda wc: paths.written(RESULTS, study.spec_of(config, wc)),
        arrow=paths.source(RESULTS),
        meta=paths.source_meta(RESULTS),
        size_record=lambda wc: paths.size(RESULTS, study.spec_of(config, wc)),
    output:
        paths.measurement(RESULTS),
    log:
        paths.log(RESULTS, "measure"),
    benchmark:
        paths.benchmark(RESULTS, "measure")
    wildcard_constraints:
        **GRID_WILDCARDS,
    conda:
        "../../envs/root.yaml"
    threads: timing_threads(max(study.thread_counts(config)))
    resources:
        **job_resources("measure"),
    params:
        readers=lambda wc: ",".join(
            study.file_readers(READ_PLAN, study.spec_of(config, wc))
        ),
        adapter=lambda wc: study.adapter(config, wc.format),
        selections=lambda wc: commands.selections(config, wc.sample),
        modes=",".join(study.read_modes(config)),
        repetitions=config["measure"]["repetitions"],
        min_repetitions=config["measure"]["min_repetitions"],
        precision=config["measure"]["precision"],
        budget=config["measure"]["budget_s"],
        threads=",".join(map(str, study.thread_counts(config))),
        timeout=config["measure"]["timeout_s"],
    shell:
        "hepfmt measure {input.data:q} --source {input.arrow:q} --format {params.adapter:q} "
        "--name {wildcards.format:q} "
        "--variant {wildcards.variant:q} --cluster-size {wildcards.cluster} "
        "--readers {params.readers:q} {params.selections} --modes {params.modes:q} "
        "--repetitions {params.repetitions} --min-repetitions {params.min_repetitions} "
        "--precision {params.precision} --budget-s {params.budget} --threads {params.threads} "
        "--timeout {params.timeout} --size-record {input.size_record:q} -o {output:q} > {log:q} 2>&1"


rule pair:
    input:
        ttree=lambda wc: paths.written(RESULTS, pair_job(wc).ttree),
        parquet=lambda wc: paths.written(RESULTS, pair_job(wc).parquet),
        ttree_size=lambda wc: paths.size(RESULTS, pair_job(wc).ttree),
        parquet_size=lambda wc: paths.size(RESULTS, pair_job(wc).parquet),
        arrow=paths.source(RESULTS),
        meta=paths.source_meta(RESULTS),
        # a "fastest" side's candidates: their measure records say which reader is quickest
        # (analysis/hepfmt/measure/fastest.py), their size records prove the chosen file
        candidates=lambda wc: [
            path(RESULTS, f)
            for f in pair_job(wc).candidate_files
            for path in (paths.measurement, paths.size, paths.written)
        ],
        # a side's own measure record, where the run measures its file: its codec bounds
        measured=lambda wc: [
            paths.measurement(RESULTS, f) for f in pair_job(wc).measured_files
        ],
    output:
        paths.pair(RESULTS),
    log:
        paths.log(RESULTS, "pair"),
    benchmark:
        paths.benchmark(RESULTS, "pair")
    wildcard_constraints:
        sample=GRID_WILDCARDS["sample"],
        cluster=GRID_WILDCARDS["cluster"],
        pair=study.PAIR_SLUG_PATTERN,
        selection=r"[A-Za-z0-9_+-]+",
    conda:
        "../../envs/root.yaml"
    # a pairing at two threads (compare.pairs[].threads) holds that many cores
    threads: lambda wc: timing_threads(study.pair_threads(config, pair_job(wc).pair))(wc)
    resources:
        **job_resources("pair"),
    params:
        # the same spec `hepfmt bench reproduce` builds (analysis/hepfmt/plan/commands.py)
        args=lambda wc: commands.pair_arguments(
            commands.pair_spec(config, pair_job(wc))
        ),
    shell:
        "hepfmt pair {params.args} -o {output:q} > {log:q} 2>&1"
