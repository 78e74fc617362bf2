"""The Arrow IPC reader opens a file no more often than pyarrow's own call for the same read.

Opening an IPC file reads and parses its footer (the whole schema); on a 1500-branch file that
is a visible part of a ten-branch read, so an extra open is measured as reader time.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.feather as feather
import pytest

from conftest import N_EVENTS
from hepfmt import formats
from hepfmt.errors import InputError
from hepfmt.formats.base import Marks


@pytest.fixture
def opens(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Every ``pyarrow.ipc.open_file`` call made from Python, as its source."""
    calls: list[object] = []
    real = pa.ipc.open_file

    def counting(source, *args, **kwargs):
        calls.append(source)
        return real(source, *args, **kwargs)

    monkeypatch.setattr(pa.ipc, "open_file", counting)
    return calls


@pytest.fixture
def feather_file(written) -> str:
    return str(written("feather", "zstd-3"))


def test_scan_opens_footer_twice_on_one_handle(feather_file, selection, opens):
    """Naming columns takes pyarrow two opens (schema, then indices), not more, and both
    read through the same file handle."""
    reader = formats.get("feather").readers["pyarrow"]
    assert reader.scan(feather_file, selection, 1, Marks()) == N_EVENTS
    assert len(opens) == 2
    assert opens[0] is opens[1]


def test_read_opens_no_more_than_scan(feather_file, selection, opens):
    """The proof checks the selection against the schema the read opens anyway."""
    formats.get("feather").readers["pyarrow"].read(feather_file, selection)
    assert len(opens) == 2


def test_scan_matches_library_call(feather_file, selection):
    """What the scan hands over is what ``feather.read_table`` returns for the selection (in
    the file's column order: the reader looks columns up by name)."""
    marks = Marks()
    formats.get("feather").readers["pyarrow"].scan(feather_file, selection, 1, marks)
    expected = feather.read_table(feather_file, columns=selection, memory_map=False)
    assert pa.Table.from_batches(marks.held).select(selection).equals(expected)


def test_scan_names_missing_branch(feather_file):
    """The check moved into the read: a scan of an absent branch still names it."""
    reader = formats.get("feather").readers["pyarrow"]
    with pytest.raises(InputError, match="Jet_nosuchthing"):
        reader.scan(feather_file, ["nJet", "Jet_nosuchthing"], 1, Marks())
