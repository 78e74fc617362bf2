# Shared helpers: wildcard constraints and config lookups used by several stages.


wildcard_constraints:
    sample=r"[A-Za-z0-9_]+",
    format=r"[a-z0-9]+",
    variant=r"[a-z0-9+-]+",
    cluster=r"\d+",


def format_options(fmt):
    """Writer options from the config as repeated --option KEY=VALUE arguments."""
    opts = config["formats"][fmt].get("options", {})
    return " ".join(f"--option {k}={v}" for k, v in opts.items())


def selection_args():
    sels = config["measure"]["selections"]
    return " ".join(
        f"--selection '{name}={b if b == '*' else ','.join(b)}'" for name, b in sels.items()
    )


def convert_mem_mb(wc):
    """ROOT holds one cluster of baskets in memory while it fills (~10 kB per entry for the
    1500-branch NanoAOD schema, measured); the source itself is memory-mapped."""
    return 1500 + int(wc.cluster) // 100
