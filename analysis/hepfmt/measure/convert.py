"""One source sample written in one format, variant and cluster size, and proven: the
``convert`` step. A written file counts only once its readers read back the source's checksums
(:mod:`.verify`); a file that fails is deleted, so nothing half-proven is taken as a result."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from hepfmt import formats
from hepfmt.errors import HepfmtError, UsageError
from hepfmt.measure import digest, memcap
from hepfmt.measure.sizes import write_size_record
from hepfmt.measure.verify import check_source, prove_readers, verify_written
from hepfmt.samples.source import read_source_meta


def convert(source: str | Path, output: str | Path, adapter: str, variant_name: str,
            cluster_size: int, options: Mapping[str, object], prove: list[str],
            name: str | None = None, size_output: str | Path | None = None) -> None:
    """Write ``source`` as ``adapter`` and prove it by ``prove`` (reader names) and the format's
    own check; with ``size_output``, also its size record (bytes per branch, the proofs, the
    bytes' digest) under the config's ``name`` of the format."""
    fmt = formats.get(adapter)
    variant = fmt.variant(variant_name, "--variant")
    options = dict(options)
    unknown = sorted(set(options) - fmt.options) if fmt.options is not None else []
    if unknown:
        raise UsageError("--option", f"{adapter} has no writer option {unknown[0]!r}; "
                                      f"known: {sorted(fmt.options)}")
    missing = [r for r in prove if r not in fmt.readers]
    if missing:
        raise UsageError("--prove", f"{adapter} has no reader {missing[0]!r}")
    # the source is read before it is proven: under the cap of its declared (naive) bytes
    with memcap.capped(source, read_source_meta(source)["naive_bytes"]):
        meta = check_source(source)
    fmt.write(Path(source), Path(output), variant, cluster_size, options)
    # the bytes the proofs prove, and their identity: a file replaced before a proof's read
    # is refused (digest.unchanged after each read), never proven in place of these bytes
    written, identity = digest.hashed(output) if size_output else (None, None)
    unverifiable = fmt.unverifiable(options) if fmt.unverifiable else None
    proofs = {}
    if unverifiable is None:
        try:
            proofs = prove_readers(output, adapter, meta, prove, identity)
            verify_written(output, adapter, meta, proofs, identity)
        except HepfmtError:
            Path(output).unlink(missing_ok=True)  # never a result
            raise
    if size_output:
        write_size_record(output, name or adapter, adapter, variant.name, cluster_size,
                          source, size_output, options, unverifiable, proofs, written)
