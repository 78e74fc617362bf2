"""The names of the read study's tables (``hepfmt tabulate``, target ``all``), each spelled here
once: :mod:`.tables` writes them, the workflow's ``tabulate`` rule lists them as its outputs and
the figures read them (:mod:`.figures`). A table named ``size`` is ``tables/size.csv`` in a
results directory. Imports nothing: the Snakefile reads it while it parses.
"""

from __future__ import annotations

SIZE = "size"
GROUPS = "groups"
READS = "reads"
RATIOS = "ratios"
PAIRS = "pairs"
FORMATS = "formats"
SAMPLES = "samples"
REPETITIONS = "repetitions"

#: The tables that average over samples (:func:`.tables.summaries`), in the order written.
SUMMARIES = (SIZE, GROUPS, READS, RATIOS, PAIRS, FORMATS)
#: The tables also written as documents (Markdown + HTML: :func:`.documents.write_doc`).
DOCUMENTS = (SIZE, READS, RATIOS, PAIRS, FORMATS, SAMPLES)
#: Every table ``tabulate`` writes as CSV: the documents first, as the report lists them.
CSV = (*DOCUMENTS, GROUPS, REPETITIONS)
