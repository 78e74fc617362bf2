"""The ADL benchmark tasks: every (engine, format) equals the reference on the generated sample,
and every engine gets the hand-worked answer on three hand-made events."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from hepfmt import formats
from hepfmt.errors import VerificationError
from hepfmt.queries import ENGINES, DistributedModule, Engine, EngineModule, supported
from hepfmt.queries import tasks as T
from hepfmt.queries.reference import compare, passing, reference

PAIRS = sorted({(e, f) for e, f, _ in supported()})
TASKS = T.select()


def _engine_run(engine: str, path: Path) -> T.Hists:
    module = ENGINES[engine].load()
    module.prepare()
    return module.run(path, [T.TASKS[n] for n in sorted(ENGINES[engine].tasks)])


def _reference(source: Path) -> T.Hists:
    out: T.Hists = {}
    for task in TASKS:
        out.update(reference(source, task))
    return out


@pytest.fixture(scope="module")
def expected(source: Path) -> T.Hists:
    return _reference(source)


@pytest.mark.parametrize(("engine", "fmt"), PAIRS)
def test_engine_equals_reference(engine: str, fmt: str, written, expected: T.Hists) -> None:
    got = _engine_run(engine, written(fmt, "zstd-3"))
    for task in TASKS:
        compare(task, expected, got, f"{engine} on {fmt}")


def test_reference_selects_something(source: Path, expected: T.Hists) -> None:
    """The generated sample exercises every task (else equality would prove little)."""
    assert all(h.sum(flow=True) > 0 for h in expected.values())
    assert passing(source, T.TASKS[5]) == expected["dimuon_met"].sum(flow=True)


def test_a_format_not_applicable_is_one_the_engine_does_not_read() -> None:
    """A reason is given only for a known format the engine leaves out; coffea gives one for
    Arrow IPC, which the awkward and polars engines read."""
    for e in ENGINES.values():
        assert set(e.not_applicable) <= set(formats.names()) - e.formats, e.name
        assert all(e.not_applicable.values()), e.name
    assert set(ENGINES["coffea"].not_applicable) == {"feather"}


@pytest.mark.parametrize("name", list(ENGINES))
def test_every_engine_module_meets_its_protocol(name: str) -> None:
    """An engine is its module (prepare, run; connect if distributed) and its registry line,
    whose costs are of formats it reads."""
    e = ENGINES[name]
    module = e.load()
    assert isinstance(module, DistributedModule if e.distributed else EngineModule)
    assert e.cost and set(e.cost) <= e.formats, name


def test_a_module_without_the_protocol_is_refused() -> None:
    fake = Engine("fake", "hepfmt.queries.tasks", frozenset({"parquet"}), frozenset({1}))
    with pytest.raises(TypeError, match="EngineModule"):
        fake.load()
    assert not isinstance(ENGINES["awkward"].load(), DistributedModule)


# -- the comparison and the binning --------------------------------------------------------


def test_compare_exact_and_tolerance() -> None:
    task = T.TASKS[5]  # tolerance 1e-3 per entry
    ref = T.fill(task, {"dimuon_met": np.full(1000, 50.5)})
    moved = T.fill(task, {"dimuon_met": np.r_[np.full(999, 50.5), 52.5]})
    compare(task, ref, moved)  # one entry of 1000 moved: allowed
    two = T.fill(task, {"dimuon_met": np.r_[np.full(998, 50.5), 52.5, 52.5]})
    with pytest.raises(VerificationError, match="2 entries differ, 1 allowed"):
        compare(task, ref, two)
    exact = T.TASKS[1]  # no tolerance: one entry across one edge fails
    ref1 = T.fill(exact, {"met": np.full(1000, 50.5)})
    with pytest.raises(VerificationError, match="1 entries differ, 0 allowed"):
        compare(exact, ref1, T.fill(exact, {"met": np.r_[np.full(999, 50.5), 52.5]}))
    with pytest.raises(VerificationError, match="1 entries differ, 0 allowed"):  # lost to a cut
        compare(exact, ref1, T.fill(exact, {"met": np.full(999, 50.5)}))


def test_binning_is_th1s() -> None:
    """58.0 on 0-200 / 100 bins: TH1 says bin 30 (1-based), boost-histogram would say 29."""
    axis = T.TASKS[1].axes[0]
    assert axis.flow_index(np.array([58.0, 114.0, -1.0, 200.0, np.nan])).tolist() == \
        [30, 58, 0, 101, 101]
    h = T.fill(T.TASKS[1], {"met": np.array([58.0])})["met"]
    assert h.values(flow=True)[30] == 1


# -- three hand-made events -----------------------------------------------------------------

HALF_PI, PI = math.pi / 2, math.pi
#: Event 0: an opposite-charge Z -> mu mu (45.6 GeV each, back to back), three jets, one
#: electron; event 1: the same muons with equal charges, three central 57.5 GeV jets 120
#: degrees apart (trijet mass 3 * 57.5 = 172.5) plus a forward jet, an electron next to the first
#: jet; event 2: no jets, one muon.
EVENTS = {
    "MET_pt": [50.0, 150.0, 250.0], "MET_phi": [0.0, 0.0, 0.0],
    "Jet_pt": [[40.5, 20.5, 10.0], [57.5, 57.5, 57.5, 20.0], []],
    "Jet_eta": [[0.0, 0.0, 0.5], [0.0, 0.0, 0.0, 3.0], []],
    "Jet_phi": [[0.0, HALF_PI, PI], [0.0, 2 * PI / 3, -2 * PI / 3, 0.0], []],
    "Jet_mass": [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0], []],
    "Jet_btagDeepFlavB": [[0.2, 0.7, 0.1], [0.1, 0.2, 0.3, 0.99], []],
    "Muon_pt": [[45.6, 45.6], [45.6, 45.6], [30.0]],
    "Muon_eta": [[0.0, 0.0], [0.0, 0.0], [0.0]],
    "Muon_phi": [[PI / 4, -3 * PI / 4], [PI / 4, -3 * PI / 4], [0.0]],
    "Muon_mass": [[0.0, 0.0], [0.0, 0.0], [0.0]],
    "Muon_charge": [[1, -1], [1, 1], [1]],
    "Electron_pt": [[30.0], [15.0], []], "Electron_eta": [[2.0], [0.1], []],
    "Electron_phi": [[HALF_PI], [0.0], []], "Electron_mass": [[0.0], [0.0], []],
    "Electron_charge": [[1], [-1], []],
}
#: The answers, worked by hand from the events above.
ANSWERS = {
    "met": [50.0, 150.0, 250.0],
    "jet_pt": [40.5, 20.5, 10.0, 57.5, 57.5, 57.5, 20.0],
    "central_jet_pt": [40.5, 20.5, 57.5, 57.5, 57.5],  # 10 fails pT, 20 @ eta 3 fails eta
    "dijet_met": [150.0],  # event 0 has one jet above 40
    "dimuon_met": [50.0],  # event 1's muons have the same charge
    # event 0's only trijet: (40.5 - 10, 20.5) in x, y; event 1: the central trio, pT ~ 0
    "trijet_pt": [math.hypot(30.5, 20.5), 0.0],
    "trijet_btag": [0.7, 0.3],  # not the forward jet's 0.99
    # event 0: 40.5 (the leptons are 0.78 away or more); event 1: the jet at 0 is 0.1 from the
    # electron, the one at -120 degrees 0.26 from the second muon: 57.5 left
    "jet_ht": [40.5, 57.5],
    # event 0: Z = the muons, other lepton the electron, 90 degrees from MET;
    # event 1 has no opposite-charge same-flavour pair
    "lepton_mt": [math.sqrt(2 * 30.0 * 50.0)],
}


@pytest.fixture(scope="module")
def hand_source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The events above as a source sample (Arrow IPC + sidecar) with NanoAOD's dtypes."""
    from hepfmt.samples.generate import arrow_schema
    from hepfmt.samples.model import default_model
    from hepfmt.samples.source import write_sidecar

    schema = default_model().subset(T.columns(TASKS)).schema
    arrays = {}
    for b in schema.branches:
        if b.name in EVENTS:
            arrays[b.name] = EVENTS[b.name]
        else:  # a counter
            members = [m for m in schema.branches if m.counter == b.name]
            arrays[b.name] = [len(x) for x in EVENTS[members[0].name]]
    table = pa.table(arrays, schema=arrow_schema(schema))
    path = tmp_path_factory.mktemp("hand") / "hand.arrow"
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)
    write_sidecar(path, schema, "hand")
    return path


@pytest.fixture(scope="module")
def hand_written(hand_source: Path, tmp_path_factory: pytest.TempPathFactory):
    out_dir = tmp_path_factory.mktemp("hand_written")

    def write(fmt: str) -> Path:
        out = out_dir / f"{fmt}.{formats.extension(fmt)}"
        if not out.exists():
            f = formats.get(fmt)
            f.write(hand_source, out, f.variant("none"), 3, {})
        return out

    return write


def _answers() -> T.Hists:
    out: T.Hists = {}
    for task in TASKS:
        out.update(T.fill(task, {a.name: np.array(ANSWERS[a.name]) for a in task.axes}))
    return out


def test_reference_on_hand_made_events(hand_source: Path) -> None:
    got = _reference(hand_source)
    for task in TASKS:
        compare(task, _answers(), got, "reference")


@pytest.mark.parametrize(("engine", "fmt"), PAIRS)
def test_engine_on_hand_made_events(engine: str, fmt: str, hand_written) -> None:
    got = _engine_run(engine, hand_written(fmt))
    for task in TASKS:
        compare(task, _answers(), got, f"{engine} on {fmt}")
