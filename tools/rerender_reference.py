"""Re-render a committed reference run's documents from its CSV records, without re-measuring.

When the way a table is *shown* changes (issue 39: every speed ratio a user reads has one
direction, above 1 = ROOT faster), the committed reference's Markdown documents must follow, and
its measurements must not change. This rewrites ``ratios.md`` from ``ratios.csv`` and
``storage-ratios.csv`` + ``storage.md`` from ``storage.csv`` (their records), keeping each file's
provenance lines, then the run's ``answer.md``. The HTML twins are not kept in a reference.

    python tools/rerender_reference.py results/reference/amd-epyc
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from hepfmt.report import answer
from hepfmt.report.answer import cpus
from hepfmt.report.storage_tables import rewrite_derived
from hepfmt.report.tables import rewrite_ratio_document


def main(ref: Path) -> None:
    if (ref / "ratios.csv").is_file() and "compares" in (ref / "ratios.csv").read_text():
        rewrite_ratio_document(ref)
    if (ref / "storage.csv").is_file():
        prov = json.loads((ref / "storage-provenance.json").read_text())
        rewrite_derived(ref, prov["cpus"])
    for html in ("ratios.html", "storage.html"):
        (ref / html).unlink(missing_ok=True)
    meta = ref / "metadata" if (ref / "metadata").is_dir() else None
    answer.write(ref, ref, meta, source=str(ref), other=cpus.sibling(ref))


if __name__ == "__main__":
    for arg in sys.argv[1:]:
        main(Path(arg))
