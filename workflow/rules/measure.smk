# Stage 3: cold/warm read measurements of one file of the measure sub-grid (grid.measured). A
# measure job takes every core Snakemake has, so no other job (a conversion, another measurement)
# runs beside it and skews its timings; each (reader, selection) runs in its own fresh process.


def measured_file(wc):
    spec = grid.FileSpec(wc.sample, wc.format, wc.variant, int(wc.cluster))
    return grid.file_path(RESULTS, spec)


rule measure:
    input:
        data=measured_file,
        arrow=f"{RESULTS}/sources/{{sample}}.arrow",
        meta=f"{RESULTS}/sources/{{sample}}.json",
    output:
        f"{RESULTS}/measurements/{{sample}}/{{format}}/{{variant}}/c{{cluster}}.json",
    params:
        readers=lambda wc: ",".join(config["measure"]["readers"][wc.format]),
        selections=selection_args(),
        modes=",".join(config["measure"]["modes"]),
        repetitions=config["measure"]["repetitions"],
        threads=config["measure"]["threads"],
        timeout=config["measure"]["timeout_s"],
    log:
        f"{RESULTS}/logs/measure/{{sample}}/{{format}}/{{variant}}/c{{cluster}}.log",
    threads: workflow.cores
    resources:
        mem_mb=4000,
        runtime=120,
    shell:
        "hepfmt measure {input.data} --source {input.arrow} --format {wildcards.format} "
        "--variant '{wildcards.variant}' --cluster-size {wildcards.cluster} "
        "--readers {params.readers} {params.selections} --modes {params.modes} "
        "--repetitions {params.repetitions} --threads {params.threads} "
        "--timeout {params.timeout} -o {output} > {log} 2>&1"
