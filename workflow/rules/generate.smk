# Stage 1: one uncompressed Arrow IPC source per sample (+ JSON sidecar with naive bytes and
# reference checksums), generated from the value model or imported from a real file. Every
# format is written from these identical arrays.


rule generate:
    input:
        sample_inputs,
    output:
        arrow=f"{RESULTS}/sources/{{sample}}.arrow",
        meta=f"{RESULTS}/sources/{{sample}}.json",
    params:
        command=sample_command,
    log:
        f"{RESULTS}/logs/generate/{{sample}}.log",
    threads: 1
    resources:
        **job_resources("generate"),
    conda:
        "../../envs/arrow.yaml"
    shell:
        "{params.command} --sample {wildcards.sample} -o {output.arrow} > {log} 2>&1"
