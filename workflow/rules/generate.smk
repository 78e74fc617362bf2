# Stage 1: one uncompressed Arrow IPC source per sample (+ JSON sidecar with naive bytes and
# reference checksums). Every format is written from these identical arrays.


rule generate:
    output:
        arrow=f"{RESULTS}/sources/{{sample}}.arrow",
        meta=f"{RESULTS}/sources/{{sample}}.json",
    params:
        process=lambda wc: config["samples"][wc.sample]["process"],
        events=lambda wc: config["samples"][wc.sample]["n_events"],
        seed=lambda wc: config["samples"][wc.sample]["seed"],
        schema=lambda wc: f"--schema {config['schema']}" if config["schema"] else "",
    log:
        f"{RESULTS}/logs/generate/{{sample}}.log",
    threads: 1
    resources:
        **job_resources("generate"),
    conda:
        "../../envs/arrow.yaml"
    shell:
        "hepfmt generate --sample {wildcards.sample} --process {params.process} "
        "--events {params.events} --seed {params.seed} {params.schema} "
        "-o {output.arrow} > {log} 2>&1"
