# Stage 2: write each source in every (format, variant, cluster size) of the config. The writer
# verifies cluster / row-group sizes from the written file's own metadata before it renames the
# file into place, proves every branch read back (by the readers that will time the file, or
# the format's verifier), then records the file's size (normalised the 2018 way), layout and
# proofs; Snakemake removes the outputs of a failed job.


rule convert:
    input:
        arrow=paths.source(RESULTS),
        meta=paths.source_meta(RESULTS),
        # without keep_files: the release of the file group this one's writing waits for, so
        # that at most file_groups_in_flight groups hold files at once (analysis/hepfmt/plan/scratch.py)
        gate=lambda wc: GATES[scratch.FileGroup(wc.sample, int(wc.cluster))],
    output:
        # without keep_files, deleted by Snakemake after its last reader
        data=paths.written(RESULTS) if KEEP_FILES else temp(paths.written(RESULTS)),
        size=paths.size(RESULTS),
    log:
        paths.log(RESULTS, "convert"),
    benchmark:
        paths.benchmark(RESULTS, "convert")
    wildcard_constraints:
        **GRID_WILDCARDS,
        ext="|".join(study.extensions()),
    # ready conversions go before a timing job (which waits for every core): two at a time
    # they keep both cores busy, where a timing job waiting for a core would leave one idle
    priority: 1
    conda:
        "../../envs/root.yaml"
    threads: 1
    resources:
        **job_resources("convert"),
    params:
        options=lambda wc: commands.writer_options(config, wc.format),
        adapter=lambda wc: study.adapter(config, wc.format),
        # the readers that will time this file (in measure and pair jobs), proven here while
        # other jobs may run, so that the timing jobs (which have the machine to themselves)
        # spend their time timing, and a pair's first read is the first in its process
        prove=lambda wc: commands.prove(PROOF_PLAN, study.spec_of(config, wc)),
    shell:
        "hepfmt convert {input.arrow:q} --format {params.adapter:q} --name {wildcards.format:q} "
        "--variant {wildcards.variant:q} --cluster-size {wildcards.cluster} {params.options} "
        "{params.prove} -o {output.data:q} --size-output {output.size:q} > {log:q} 2>&1"


# A file group's release (without keep_files): every record of its files is made, so the files
# (temp outputs) are gone or going; records what written files held on disk at that moment.
rule release:
    input:
        lambda wc: GROUP_OUTPUTS[scratch.FileGroup(wc.sample, int(wc.cluster))],
    output:
        paths.release(RESULTS),
    log:
        paths.log(RESULTS, "release"),
    wildcard_constraints:
        sample=GRID_WILDCARDS["sample"],
        cluster=GRID_WILDCARDS["cluster"],
    localrule: True
    run:
        scratch.release_job(RESULTS, wildcards, output[0], log[0])
