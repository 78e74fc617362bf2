# Stage 2: write each source in every (format, variant, cluster size) of the config. The writer
# verifies cluster / row-group sizes from the written file's own metadata before it renames the
# file into place, then records the file's size (normalised the 2018 way) and layout; Snakemake
# removes the outputs of a failed job.


rule convert:
    input:
        arrow=f"{RESULTS}/sources/{{sample}}.arrow",
        meta=f"{RESULTS}/sources/{{sample}}.json",
    output:
        data=f"{RESULTS}/files/{{sample}}/{{format}}/{{variant}}/c{{cluster}}.{{ext}}",
        size=f"{RESULTS}/sizes/{{sample}}/{{format}}/{{variant}}/c{{cluster}}.{{ext}}.json",
    wildcard_constraints:
        ext="|".join(study.extensions()),
    params:
        options=lambda wc: format_options(wc.format),
        adapter=lambda wc: study.adapter(config, wc.format),
    log:
        f"{RESULTS}/logs/convert/{{sample}}/{{format}}/{{variant}}/c{{cluster}}.{{ext}}.log",
    threads: 1
    resources:
        **job_resources("convert"),
    conda:
        "../../envs/root.yaml"
    shell:
        "hepfmt convert {input.arrow} --format {params.adapter} --name {wildcards.format} "
        "--variant '{wildcards.variant}' --cluster-size {wildcards.cluster} {params.options} "
        "-o {output.data} --size-output {output.size} > {log} 2>&1"
