"""Write the config exactly as the workflow validated it (defaults filled, --config overrides
applied): the tables' provenance hashes this file, not the one the user passed."""

import yaml

snakemake = globals()["snakemake"]  # injected by Snakemake's script directive

with open(snakemake.output[0], "w") as f:
    yaml.safe_dump(snakemake.config, f, sort_keys=False)
with open(snakemake.log[0], "w") as f:
    print(f"resolved config written to {snakemake.output[0]}", file=f)
