# Stage 1: one uncompressed Arrow IPC source per sample (+ JSON sidecar with naive bytes and
# reference checksums), generated from the value model or imported from a real file. Every
# format is written from these identical arrays.


rule generate:
    input:
        lambda wc: commands.sample_inputs(config, wc.sample),
    output:
        arrow=paths.source(RESULTS),
        meta=paths.source_meta(RESULTS),
    params:
        command=lambda wc: commands.sample(config, wc.sample),
    log:
        paths.log(RESULTS, "generate"),
    threads: 1
    resources:
        **job_resources("generate"),
    conda:
        "../../envs/arrow.yaml"
    shell:
        "{params.command} --sample {wildcards.sample:q} -o {output.arrow:q} > {log:q} 2>&1"
