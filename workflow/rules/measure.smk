# Stage 3: cold/warm read measurements of one file of the read plan (study.measured: the measure
# sub-grid with its readers, plus the compare pairs at compare.cluster_sizes with theirs). A
# measure job takes every core Snakemake has (on a cluster: an exclusive node, from the profile),
# so no other job (a conversion, another measurement) runs beside it and skews its timings; each
# (reader, selection) runs in its own fresh process.

rule measure:
    input:
        data=measured_file,
        arrow=f"{RESULTS}/sources/{{sample}}.arrow",
        meta=f"{RESULTS}/sources/{{sample}}.json",
    output:
        f"{RESULTS}/measurements/{{sample}}/{{format}}/{{variant}}/c{{cluster}}.json",
    params:
        readers=lambda wc: ",".join(
            study.file_readers(
                READ_PLAN, study.spec(config, wc.sample, wc.format, wc.variant, int(wc.cluster))
            )
        ),
        adapter=lambda wc: study.adapter(config, wc.format),
        selections=selection_args(),
        modes=",".join(config["measure"]["modes"]),
        repetitions=config["measure"]["repetitions"],
        threads=",".join(map(str, study.thread_counts(config))),
        timeout=config["measure"]["timeout_s"],
    log:
        f"{RESULTS}/logs/measure/{{sample}}/{{format}}/{{variant}}/c{{cluster}}.log",
    threads: measure_threads
    resources:
        **job_resources("measure"),
    conda:
        "../../envs/root.yaml"
    shell:
        "hepfmt measure {input.data} --source {input.arrow} --format {params.adapter} "
        "--name {wildcards.format} "
        "--variant '{wildcards.variant}' --cluster-size {wildcards.cluster} "
        "--readers {params.readers} {params.selections} --modes {params.modes} "
        "--repetitions {params.repetitions} --threads {params.threads} "
        "--timeout {params.timeout} -o {output} > {log} 2>&1"
