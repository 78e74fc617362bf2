# Stage 5: figures (PNG + PDF) from the tables, one rule per figure family (drawn by
# analysis/hepfmt/report/figures/<family>.py, or the module its Family names), every family of every
# target (the read study's `all`, `queries`, `storage`) from this one definition, each PNG in
# the report (snakemake --report) with its caption from workflow/report/<family>.rst. The
# registry imported here loads no plotting library.
from hepfmt.report import figures, style

FIGURE_SUBCATEGORIES = {
    "answer": "The answer",
    "size": "Size",
    "groups": "Size",
    "ratios": "Read speed",
    "tradeoff": "Read speed",
    "memory": "Memory",
    "queries": "Analysis queries",
    "query_ratios": "Analysis queries",
    "storage": "Storage profiles",
}
# How the report lists each figure: by this title, not by its file's path (report(labels=...));
# a family without one stops the workflow at parse time, as an untitled figure would be listed
# by path
FIGURE_TITLES = {
    "answer": "Summary: size, read time and ROOT / Parquet speed",
    "size": "Normalized size vs cluster size",
    "groups": "Where the bytes go, per branch group",
    "ratios": "ROOT / Parquet speed vs cluster size",
    "tradeoff": "Size vs read time, every reader",
    "memory": "Peak memory per reader",
    "queries": "Analysis queries: events/s per task",
    "query_ratios": "Analysis queries: ROOT / Parquet per task",
    "storage": "Reads on storage profiles",
}
# The report's (category, subcategory) of each family: the summary figure with the answer
# (tabulate.smk's ANSWER_CATEGORY, the report's first), every other under Figures
FIGURE_PLACES = {
    name: (
        ANSWER_CATEGORY
        if name == "answer"
        else ("Figures", FIGURE_SUBCATEGORIES.get(name, "Other"))
    )
    for name in figures.FAMILIES
}
# each target's provenance record, which its figures' footers cite
FIGURE_PROVENANCE = {
    "all": paths.provenance,
    "queries": paths.query_provenance,
    "storage": paths.storage_provenance,
}
# the families of the read study (target `all`); others are drawn by their own target's rules
STUDY_FIGURES = {n: f for n, f in figures.FAMILIES.items() if f.target == "all"}
FIGURE_FILES = [
    paths.figure(RESULTS, name, fam.stem, ext)
    for name, fam in STUDY_FIGURES.items()
    for ext in style.FILE_FORMATS
]


for _family, _figure in figures.FAMILIES.items():

    rule:
        name:
            f"figure_{_family}"
        input:
            tables=[paths.table(RESULTS, t, "csv") for t in _figure.tables],
            provenance=FIGURE_PROVENANCE[_figure.target](RESULTS),
            plan=paths.plan_record(RESULTS),
        output:
            png=report(
                paths.figure(RESULTS, _family, _figure.stem, "png"),
                caption=f"../report/{_family}.rst",
                category=FIGURE_PLACES[_family][0],
                subcategory=FIGURE_PLACES[_family][1],
                labels={"title": FIGURE_TITLES[_family]},
            ),
            pdf=paths.figure(RESULTS, _family, _figure.stem, "pdf"),
        log:
            paths.log(RESULTS, "figure", {"family": _family}),
        localrule: True
        conda:
            "../../envs/arrow.yaml"
        threads: 1
        resources:
            mem_mb=2000,
            runtime=10,
        params:
            family=_family,
            tables=lambda wc, input: os.path.dirname(input.tables[0]),
            out=lambda wc, output: os.path.dirname(output.png),
            config_name=CONFIG_NAME,
        shell:
            "hepfmt figure {params.family:q} --tables {params.tables:q} "
            "--provenance {input.provenance:q} --plan {input.plan:q} "
            "--config-name {params.config_name:q} -o {params.out:q} > {log:q} 2>&1"
