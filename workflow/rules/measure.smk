# Stage 3: cold/warm read measurements of one file of the read plan (study.read_plan: the measure
# sub-grid with its readers, plus the compare pairs at compare.cluster_sizes with theirs). A
# measure job takes every core Snakemake has (on a cluster: an exclusive node, from the profile),
# so no other job (a conversion, another measurement) runs beside it and skews its timings; each
# reader runs in its own fresh process, which times every selection and cache mode of it.
# Selections come resolved against the sample's own branches (analysis/plan/selections.py:
# MET_pt or PFMET_pt, nJet or nJet_pt).


rule measure:
    input:
        data=lambda wc: paths.written(RESULTS, study.spec_of(config, wc)),
        arrow=paths.source(RESULTS),
        meta=paths.source_meta(RESULTS),
        size_record=lambda wc: paths.size(RESULTS, study.spec_of(config, wc)),
    output:
        paths.measurement(RESULTS),
    params:
        readers=lambda wc: ",".join(study.file_readers(READ_PLAN, study.spec_of(config, wc))),
        adapter=lambda wc: study.adapter(config, wc.format),
        selections=lambda wc: commands.selections(config, wc.sample),
        modes=lambda wc: ",".join(study.read_modes(config, study.spec_of(config, wc))),
        repetitions=config["measure"]["repetitions"],
        min_repetitions=config["measure"]["min_repetitions"],
        precision=config["measure"]["precision"],
        budget=config["measure"]["budget_s"],
        threads=",".join(map(str, study.thread_counts(config))),
        timeout=config["measure"]["timeout_s"],
    log:
        paths.log(RESULTS, "measure"),
    threads: timing_threads(max(study.thread_counts(config)))
    resources:
        **job_resources("measure"),
    conda:
        "../../envs/root.yaml"
    shell:
        "hepfmt measure {input.data:q} --source {input.arrow:q} --format {params.adapter:q} "
        "--name {wildcards.format:q} "
        "--variant {wildcards.variant:q} --cluster-size {wildcards.cluster} "
        "--readers {params.readers:q} {params.selections} --modes {params.modes:q} "
        "--repetitions {params.repetitions} --min-repetitions {params.min_repetitions} "
        "--precision {params.precision} --budget-s {params.budget} --threads {params.threads} "
        "--timeout {params.timeout} --size-record {input.size_record:q} -o {output:q} > {log:q} 2>&1"
