"""The names of the study's tables, each spelled here once: those of the read study (``hepfmt
tabulate``, target ``all``), which :mod:`.tables` writes, and those of the ``queries`` and
``storage`` targets (:mod:`.query_tables`, :mod:`.storage_tables`); the workflow's tabulate rules
list them as their outputs and the figures read them (:mod:`.figures`). A table named ``size``
is ``tables/size.csv`` in a results directory. Imports nothing: the Snakefile reads it while it
parses.
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

#: The run's answer (``hepfmt answer``: answer.md and answer.json), written from the tables above
ANSWER = "answer"

#: The tables that average over samples (:func:`.tables.summaries`), in the order written.
SUMMARIES = (SIZE, GROUPS, READS, RATIOS, PAIRS, FORMATS)
#: The tables also written as documents (Markdown + HTML: :func:`.documents.write_doc`).
DOCUMENTS = (SIZE, READS, RATIOS, PAIRS, FORMATS, SAMPLES)
#: Every table ``tabulate`` writes as CSV: the documents first, as the report lists them.
CSV = (*DOCUMENTS, GROUPS, REPETITIONS)

# The queries target (``hepfmt tabulate-queries``): the events/s table (a document too), the
# per-task ROOT / Parquet answer and the time to the first histogram
QUERIES = "queries"
QUERY_RATIOS = "queries-ratios"
QUERY_FIRST = "queries-first"
# The storage target (``hepfmt tabulate-storage``): the reads per profile (a document too) and
# the ROOT / Parquet ratios per profile
STORAGE = "storage"
STORAGE_RATIOS = "storage-ratios"
