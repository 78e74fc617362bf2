"""examples/read-results.ipynb runs as a newcomer runs it (issue 42): executed cell by cell in a
real Python kernel (nbclient, ipykernel), it reads a run's committed tables, raises no error and
draws its figure, from any working directory and on any run's tables directory.

Each execution starts a kernel and imports pandas and matplotlib: seconds, not minutes, but the
timeout is generous for a busy machine, and no test asserts on wall time.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from helpers import ROOT

NOTEBOOK = ROOT / "examples" / "read-results.ipynb"
DEFAULT_RUN = ROOT / "results" / "reference" / "amd-epyc"
OTHER_RUN = ROOT / "results" / "reference" / "intel-xeon"
CELL_TIMEOUT = 600  # seconds per cell: generous, a shared 2-core machine can be slow
RESULTS_LINE = 'RESULTS = Path("results/reference/amd-epyc")'


def read() -> nbformat.NotebookNode:
    return nbformat.read(NOTEBOOK, as_version=4)


def execute(nb: nbformat.NotebookNode, cwd: Path) -> nbformat.NotebookNode:
    """Run every cell with ``cwd`` as the kernel's working directory (Jupyter starts a notebook's
    kernel in the notebook's folder). An error in a cell raises CellExecutionError."""
    # the kernel draws inline, as in Jupyter, whatever backend the caller's environment names
    env = {k: v for k, v in os.environ.items() if k != "MPLBACKEND"}
    NotebookClient(nb, timeout=CELL_TIMEOUT, kernel_name="python3",
                   resources={"metadata": {"path": str(cwd)}}).execute(env=env)
    return nb


def outputs(nb: nbformat.NotebookNode) -> list[nbformat.NotebookNode]:
    return [o for cell in nb.cells if cell.cell_type == "code" for o in cell.outputs]


def printed(nb: nbformat.NotebookNode) -> str:
    return "".join(o.get("text", "") for o in outputs(nb) if o.output_type == "stream")


def figures(nb: nbformat.NotebookNode) -> list[nbformat.NotebookNode]:
    return [o for o in outputs(nb) if "image/png" in o.get("data", {})]


def test_the_committed_notebook_has_no_outputs() -> None:
    """Committed cleared: small and diffable, and every number comes from a fresh run."""
    nb = read()
    code = [cell for cell in nb.cells if cell.cell_type == "code"]
    assert code
    assert all(cell.outputs == [] and cell.execution_count is None for cell in code)


def test_the_notebook_runs_and_draws_a_figure() -> None:
    nb = execute(read(), NOTEBOOK.parent)
    assert not [o for o in outputs(nb) if o.output_type == "error"]
    assert f"reading {DEFAULT_RUN}" in printed(nb)
    assert len(figures(nb)) == 1


def test_results_is_found_from_another_working_directory(tmp_path: Path) -> None:
    """RESULTS is relative to the repository root, not to where the kernel runs."""
    nb = execute(read(), tmp_path)
    assert f"reading {DEFAULT_RUN}" in printed(nb)
    assert len(figures(nb)) == 1


def test_results_can_point_at_another_run(tmp_path: Path) -> None:
    """A user's own tables directory (a results/tables of another run) in place of the default."""
    tables = tmp_path / "tables"
    tables.mkdir()
    for name in ("formats.csv", "ratios.csv"):
        shutil.copy(OTHER_RUN / name, tables / name)
    nb = read()
    first = next(cell for cell in nb.cells if cell.cell_type == "code")
    assert RESULTS_LINE in first.source
    first.source = first.source.replace(RESULTS_LINE, f"RESULTS = Path({str(tables)!r})")
    nb = execute(nb, NOTEBOOK.parent)
    assert f"reading {tables}" in printed(nb)
    assert len(figures(nb)) == 1
