"""``hepfmt bench layers`` end to end: a real ``perf record`` attached to real ROOT and pyarrow
readers, and the Parquet layer table on symbols a real pyarrow read showed."""

from __future__ import annotations

import shutil
import subprocess
import sys
from functools import cache

import pytest

from hepfmt.cli import main
from hepfmt.measure.layers import OTHER, PARQUET_LAYERS, classify, layer_of, profiled_readers


@cache
def _why_perf_cannot_attach() -> str | None:
    """None where ``perf record`` can profile a process here, else what perf said."""
    perf = shutil.which("perf")
    if perf is None:
        return "perf is not installed"
    done = subprocess.run([perf, "record", "-q", "-o", "/dev/null", "--", sys.executable, "-c",
                           "pass"], capture_output=True, text=True, timeout=120)
    return None if done.returncode == 0 else f"perf cannot record here: {done.stderr[-200:]}"


@pytest.fixture
def perf_attaches() -> None:
    """Skips a test that profiles, saying why, where perf cannot record a process here."""
    why = _why_perf_cannot_attach()
    if why is not None:
        pytest.skip(why)

#: Symbols as ``perf report --sort dso,sym`` showed them on an all-branch pyarrow 26 read of a
#: zstd NanoAOD Parquet file, each with the layer it belongs to.
PYARROW_SYMBOLS = {
    "libarrow.so.2600 [.] ZSTD_decompressSequences_bmi2.constprop.0":
        "decompression (zstd, snappy, lz4, zlib)",
    "libarrow.so.2600 [.] ZSTD_createDCtx": "decompression (zstd, snappy, lz4, zlib)",
    "libarrow.so.2600 [.] HUF_decompress4X2_usingDTable_internal_fast_c_loop":
        "decompression (zstd, snappy, lz4, zlib)",
    "libparquet.so.2600 [.] parquet::LevelDecoder::Decode": "definition/repetition levels",
    "libparquet.so.2600 [.] parquet::internal::(anonymous namespace)::"
    "DefRepLevelsToListInfo<int>": "definition/repetition levels",
    "libparquet.so.2600 [.] parquet::internal::GreaterThanBitmapAvx2":
        "definition/repetition levels",
    "libparquet.so.2600 [.] parquet::internal::(anonymous namespace)::TypedRecordReader<"
    "parquet::PhysicalType<(parquet::Type::type)4> >::DelimitRecords":
        "definition/repetition levels",
    "libarrow.so.2600 [.] arrow::internal::bpacking::unpack_avx512<unsigned short>":
        "definition/repetition levels",
    "libarrow.so.2600 [.] arrow::internal::bpacking::unpack_avx512<bool>": "boolean unpacking",
    "libarrow.so.2600 [.] arrow::internal::(anonymous namespace)::"
    "Simd512UnpackerForWidth<unsigned int, 1>::unpack": "boolean unpacking",
    "libparquet.so.2600 [.] parquet::(anonymous namespace)::SerializedPageReader::NextPage":
        "page decoding (headers, values)",
    "libparquet.so.2600 [.] apache::thrift::protocol::TCompactProtocolT<apache::thrift::"
    "transport::TMemoryBuffer>::readFieldBegin": "page decoding (headers, values)",
    "libparquet.so.2600 [.] parquet::arrow::TransferColumnData": "Arrow array building",
    "libarrow.so.2600 [.] arrow::internal::(anonymous namespace)::ValidateArrayImpl::"
    "ValidateListLike<arrow::ListType>": "Arrow array building",
    "libarrow.so.2600 [.] mi_free": "allocation and copies (pool, malloc, memcpy)",
    "libarrow.so.2600 [.] _mi_page_malloc_zero": "allocation and copies (pool, malloc, memcpy)",
    "libarrow.so.2600 [.] arrow::PoolBuffer::Reserve":
        "allocation and copies (pool, malloc, memcpy)",
    "libc.so.6 [.] __memmove_avx512_unaligned_erms":
        "allocation and copies (pool, malloc, memcpy)",
    "libc.so.6 [.] _int_malloc": "allocation and copies (pool, malloc, memcpy)",
    "[kernel.kallsyms] [k] clear_page_erms": "kernel: page faults (fresh memory)",
    "[kernel.kallsyms] [k] exc_page_fault": "kernel: page faults (fresh memory)",
    "[kernel.kallsyms] [k] do_anonymous_page": "kernel: page faults (fresh memory)",
    "[kernel.kallsyms] [k] _copy_to_iter": "kernel: file reads (page cache)",
    "[kernel.kallsyms] [k] _raw_spin_unlock_irqrestore": "kernel: other",
    "libpython3.11.so.1.0 [.] _PyEval_EvalFrameDefault":
        "Python and the reader's own loop (hepfmt)",
    "libparquet.so.2600 [.] parquet::ColumnChunkMetaData::ColumnChunkMetaDataImpl::"
    "ColumnChunkMetaDataImpl": "per-file set-up (metadata, schema, names)",
    "libscipy_openblas64_-32a4b2a6.so [.] blas_thread_server": OTHER,
}


@pytest.mark.parametrize("symbol", PYARROW_SYMBOLS)
def test_parquet_layers_sort_real_pyarrow_symbols(symbol):
    assert layer_of(symbol, PARQUET_LAYERS) == PYARROW_SYMBOLS[symbol]


def test_parquet_layers_shares_add_up():
    report = "\n".join(f"    {p:.2f}%  {s}" for p, s in zip(
        (40, 20, 10, 10, 10, 10), list(PYARROW_SYMBOLS)[::5], strict=False))
    shares, others = classify(report, PARQUET_LAYERS)
    assert sum(shares.values()) == pytest.approx(1.0)
    assert shares["decompression (zstd, snappy, lz4, zlib)"] == pytest.approx(0.4)
    assert others == []


def test_the_parquet_readers_profiled_come_from_the_registry():
    from hepfmt import formats

    readers = profiled_readers("parquet")
    assert "pyarrow" in readers
    assert all(formats.get("parquet").readers[r].library == "pyarrow" for r in readers)
    assert "polars" not in readers and "duckdb" not in readers


def _layer_rows(text: str) -> list[list[str]]:
    """The cells of the layer table's rows (after its header and rule)."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| layer |")) + 2
    rows = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in line.split("|")[1:-1]])
    return rows


def _check_layers(text: str, n_readers: int, n_layers: int) -> None:
    """Every layer has a share and CPU seconds per reader; each reader's shares add up."""
    rows = _layer_rows(text)
    assert len(rows) == n_layers
    for i in range(n_readers):
        shares = [float(r[1 + 2 * i].rstrip("%")) for r in rows]
        seconds = [float(r[2 + 2 * i]) for r in rows]
        assert sum(shares) == pytest.approx(100, abs=0.1 * n_layers)
        assert all(s >= 0 for s in seconds) and sum(seconds) > 0


@pytest.mark.usefixtures("perf_attaches")
def test_bench_layers_profiles_pyarrow_by_layer(written, source, tmp_path, capsys):
    out = tmp_path / "layers.txt"
    rc = main(["bench", "layers", str(written("parquet", "zstd-3")), "--source", str(source),
               "--format", "parquet", "--readers", "pyarrow", "--seconds", "0.3",
               "-o", str(out)])
    assert rc == 0
    text = out.read_text()
    assert "layers of Arrow C++'s Parquet reader" in text
    (row,) = [line for line in text.splitlines() if line.startswith("| pyarrow |")]
    cells = [c.strip() for c in row.split("|")[1:-1]]
    assert len(cells) == 9  # reader, pool, scans, rate, wall, user, sys, minor, major faults
    assert cells[1] not in ("", "-")  # the Arrow pool in use is named
    assert int(cells[2]) >= 1 and float(cells[3].replace(",", "")) > 0
    _check_layers(text, 1, len(PARQUET_LAYERS) + 1)
    assert "pyarrow: largest symbols" in text
    assert "codec bound (zstd" in text
    assert "pyarrow: decompression" in text and "the codec alone" in text
    assert "GetEntriesSerialized" not in text  # a TTree's fact only
    assert text.strip() in capsys.readouterr().out


@pytest.mark.usefixtures("perf_attaches")
def test_bench_layers_profiles_each_root_reader(written, source, tmp_path, capsys):
    out = tmp_path / "layers.txt"
    rc = main(["bench", "layers", str(written("ttree", "zstd-5")), "--source", str(source),
               "--format", "ttree", "--readers", "getentry,columnar", "--seconds", "0.3",
               "-o", str(out)])
    assert rc == 0
    text = out.read_text()
    rows = [line for line in text.splitlines() if line.startswith(("| getentry", "| columnar"))]
    assert len(rows) == 2
    assert all(row.split("|")[2].strip() == "-" for row in rows)  # no Arrow pool in ROOT
    _check_layers(text, 2, 9)  # ROOT's eight layers and other
    assert "codec bound (zstd" in text
    assert "GetEntriesSerialized on the jagged branches" in text
    assert text.strip() in capsys.readouterr().out


def test_bench_layers_refuses_an_unknown_reader(written, source, capsys):
    rc = main(["bench", "layers", str(written("ttree", "zstd-5")), "--source", str(source),
               "--format", "ttree", "--readers", "nosuch"])
    assert rc == 2
    assert "no reader 'nosuch'" in capsys.readouterr().err


def test_bench_layers_refuses_a_reader_without_a_layer_table(written, source, capsys):
    rc = main(["bench", "layers", str(written("parquet", "zstd-3")), "--source", str(source),
               "--format", "parquet", "--readers", "polars"])
    assert rc == 2
    err = capsys.readouterr().err
    assert "'polars' (polars) has no layer table" in err and "pyarrow" in err
