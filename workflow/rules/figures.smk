# Stage 5: figures (PNG + PDF) from the tables, one rule per figure family (analysis/figures.py),
# each PNG in the report (snakemake --report) with its caption from workflow/report/<family>.rst.
from analysis.report import figures

FIGURE_SUBCATEGORIES = {
    "size": "Size",
    "groups": "Size",
    "ratios": "Read speed",
    "tradeoff": "Read speed",
    "memory": "Memory",
}
FIGURE_FILES = [
    f"{RESULTS}/figures/{name}/{fam.stem}.{ext}"
    for name, fam in figures.FAMILIES.items()
    for ext in figures.FILE_FORMATS
]


for _family, _figure in figures.FAMILIES.items():

    rule:
        name:
            f"figure_{_family}"
        input:
            tables=[f"{RESULTS}/tables/{t}.csv" for t in _figure.tables],
            provenance=f"{RESULTS}/provenance.json",
            config=f"{RESULTS}/config.yaml",
        output:
            png=report(
                f"{RESULTS}/figures/{_family}/{_figure.stem}.png",
                caption=f"../report/{_family}.rst",
                category="Figures",
                subcategory=FIGURE_SUBCATEGORIES.get(_family, "Other"),
            ),
            pdf=f"{RESULTS}/figures/{_family}/{_figure.stem}.pdf",
        params:
            family=_family,
            tables=lambda wc, input: os.path.dirname(input.tables[0]),
            out=lambda wc, output: os.path.dirname(output.png),
            config_name=CONFIG_NAME,
        log:
            f"{RESULTS}/logs/figures/{_family}.log",
        localrule: True
        threads: 1
        resources:
            mem_mb=2000,
            runtime=10,
        conda:
            "../../envs/arrow.yaml"
        shell:
            "hepfmt figure {params.family} --tables {params.tables} "
            "--provenance {input.provenance} --config {input.config} "
            "--config-name {params.config_name:q} -o {params.out} > {log} 2>&1"
