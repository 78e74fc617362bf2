# Stage 1: one uncompressed Arrow IPC source per sample (+ JSON sidecar with naive bytes and
# reference checksums), generated from the value model or imported from a real file. Every
# format is written from these identical arrays.


rule generate:
    input:
        lambda wc: commands.sample_inputs(config, wc.sample),
    output:
        arrow=paths.source(RESULTS),
        meta=paths.source_meta(RESULTS),
    log:
        paths.log(RESULTS, "generate"),
    benchmark:
        paths.benchmark(RESULTS, "generate")
    wildcard_constraints:
        sample=GRID_WILDCARDS["sample"],
    # before conversions, which run before timings (convert.smk): every core busy until the
    # timing jobs, which each want all of them, run back to back
    priority: 2
    conda:
        "../../envs/arrow.yaml"
    threads: 1
    resources:
        **job_resources("generate"),
    params:
        command=lambda wc: commands.sample(config, wc.sample),
    shell:
        "{params.command} --sample {wildcards.sample:q} -o {output.arrow:q} > {log:q} 2>&1"
