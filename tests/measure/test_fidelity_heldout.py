"""validate-model out of sample (a model learned from the file's first half, judged against its
second, or learned from another file) and a schema mismatch said in one line, on a part of the
shared nano_dy.root small enough to write through a codec or two in seconds."""

from __future__ import annotations

from pathlib import Path

import awkward as ak
import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
import uproot

from hepfmt.cli import main
from hepfmt.measure import fidelity, heldout
from hepfmt.measure.heldout import halves, held_out
from hepfmt.samples.model import load_model

NANO = Path(__file__).resolve().parents[3] / "shared" / "nanoaod" / "nano_dy.root"
pytestmark = pytest.mark.skipif(not NANO.is_file(), reason=f"needs {NANO}")
CODECS = [("rntuple", "zstd-5"), ("parquet", "zstd-3")]


@pytest.fixture(scope="module")
def part(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Muons, jets and the generator record of the real file, as a Parquet file."""
    t = uproot.open(NANO)["Events"]
    keys = list(t.keys())
    names = [k for k in keys if k.split("_")[0] in ("Muon", "Jet", "GenPart")
             or k in ("nMuon", "nJet", "nGenPart", "event")]
    path = tmp_path_factory.mktemp("heldout") / "part.parquet"
    ak.to_parquet(t.arrays(names), path)
    return path


@pytest.fixture(autouse=True)
def _few_codecs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fidelity, "CODECS", CODECS)


def test_halves_split_the_events(part: Path, tmp_path: Path) -> None:
    learn, judge, _ = halves(str(part), "Events", tmp_path)
    assert pq.read_metadata(learn).num_rows == pq.read_metadata(judge).num_rows == 20
    assert pq.read_schema(learn).names == pq.read_schema(judge).names


def test_held_out_judges_the_other_half(part: Path) -> None:
    result = held_out(str(part), codecs=CODECS)
    assert result.judged.endswith("entries 20-39 (held out)")
    assert result.origin == "part.parquet entries 0-19"
    for tables in (result.values, result.whole):
        assert tables["replicas"].iloc[0]["real events"] == 20
        assert {"Muon", "Jet", "GenPart"} <= set(tables["checks"]["group"])
    # the branch table adds up to the group budgets it explains
    branches, checks = result.values["branches"], result.values["checks"]
    jet = branches[(branches["format"] == "parquet") & (branches["group"] == "Jet")]
    row = checks[(checks["format"] == "parquet") & (checks["group"] == "Jet")].iloc[0]
    assert jet["real"].sum() == pytest.approx(row["real"])
    assert jet["synthetic"].sum() == pytest.approx(row["synthetic"])


def test_values_are_judged_at_the_judged_events_multiplicities(part: Path,
                                                                tmp_path: Path) -> None:
    """The halves differ in muons per event (0.35 and 0.55 in nano_dy): the whole model
    carries the first half's, the judgement of its values the second's."""
    result = held_out(str(part), codecs=CODECS)
    mult = result.multiplicity.set_index("collection")
    n = [pd.read_parquet(h, columns=["nMuon"])["nMuon"]
         for h in halves(str(part), "Events", tmp_path)[:2]]
    assert mult.loc["Muon", "learned mean"] == pytest.approx(n[0].mean())
    assert mult.loc["Muon", "judged mean"] == pytest.approx(n[1].mean())
    se = (n[0].var(ddof=0) / n[0].size + n[1].var(ddof=0) / n[1].size) ** 0.5
    assert mult.loc["Muon", "z"] == pytest.approx((n[0].mean() - n[1].mean()) / se)
    synth = {k: t["multiplicity"].set_index("collection").loc["Muon", "synthetic mean"]
             for k, t in (("values", result.values), ("whole", result.whole))}
    assert abs(synth["values"] - n[1].mean()) < abs(synth["whole"] - n[1].mean())


def test_a_collection_never_seen_is_not_judged() -> None:
    """A model that saw no electron has no electron values: at the judged events' electrons
    its checks are listed, not judged, and the verdict says so."""
    checks = pd.DataFrame({"group": ["all", "Electron", "Muon"], "diff %": [1.0, -80.0, 2.0],
                           "within goal": [True, False, True]})
    checks["judged"] = checks["group"] != "Electron"
    tables = {"checks": checks}
    assert fidelity.misses(tables).empty
    line = fidelity.verdict_line(tables)
    assert line.startswith("**Goal met**: all 2 checks within 15%.")
    assert "Not judged: 1 checks of Electron, of which the model saw no object." in line


def test_validate_model_held_out_cli(part: Path, tmp_path: Path) -> None:
    report = tmp_path / "report.md"
    assert main(["validate-model", str(part), "--held-out", "--report-only",
                 "-o", str(report)]) == 0
    assert "(held out) vs a synthetic sample from part.parquet entries 0-19" in \
        report.read_text()
    assert main(["validate-model", str(part), str(tmp_path / "m.json"), "--held-out"]) == 2


def test_a_schema_mismatch_is_said_in_one_line(part: Path, tmp_path: Path,
                                               capsys: pytest.CaptureFixture) -> None:
    """The built-in model has all 1499 branches of nano_dy, the part a few of them."""
    report = tmp_path / "report.md"
    assert main(["validate-model", str(part), "--report-only", "-o", str(report)]) == 0
    warnings = [line for line in capsys.readouterr().err.splitlines() if "warning" in line]
    n_model = len(load_model(None).schema.branches)
    n_file = len(pq.read_schema(part).names)
    assert len(warnings) == 1, warnings
    assert (f"the model's schema (nano_dy.root:Events, {n_model} branches) differs from the "
            f"file's ({n_file} branches): 0 of the file's branches are missing from the model, "
            f"{n_model - n_file} of the model's from the file") in warnings[0]
    assert "**Note**: the model's schema" in report.read_text()


def test_learn_from_another_file_is_judged_out_of_sample(part: Path, tmp_path: Path) -> None:
    learn, judged, _ = halves(str(part), "Events", tmp_path)
    report = tmp_path / "report.md"
    assert main(["validate-model", str(judged), "--learn-from", str(learn), "--report-only",
                 "-o", str(report)]) == 0
    text = report.read_text()
    assert "(out of sample, at the judged events' multiplicities)" in text
    assert "## The whole model, multiplicities as learned" in text


@pytest.mark.parametrize("held", [True, False])
def test_a_tiny_file_is_refused_before_anything_is_written(
        part: Path, tmp_path: Path, capsys: pytest.CaptureFixture, held: bool,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Two events once asked for 500 clusters of two events (3.2 GB, a C++ abort, 68 MB of
    scratch directories left): now one line saying how many a judgement needs, and no scratch
    directory made (in a temporary directory of the test's own: other tests run beside it)."""
    import tempfile

    tiny = tmp_path / "tiny.parquet"
    pq.write_table(pq.read_table(part).slice(0, 2), tiny)
    private = tmp_path / "tmp"
    private.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(private))
    monkeypatch.setenv("TMPDIR", str(private))

    def scratch() -> set[Path]:
        return {*private.glob("hepfmt-fidelity-*"), *private.glob("hepfmt-heldout-*")}

    before = scratch()
    args = ["validate-model", str(tiny), "--report-only"] + (["--held-out"] if held else [])
    assert main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    needed = 2 * fidelity.MIN_JUDGED_EVENTS if held else fidelity.MIN_JUDGED_EVENTS
    assert err[-1].endswith(f"{tiny}: 2 entries: " + (
        f"a held-out judgement (two halves of {fidelity.MIN_JUDGED_EVENTS} or more) needs at "
        f"least {needed}" if held else f"a judgement of a model needs at least {needed}")), err
    assert scratch() <= before


def test_replicas_stay_few_for_the_smallest_judged_file() -> None:
    assert fidelity.replicas(1) == fidelity.replicas(fidelity.MIN_JUDGED_EVENTS) <= 200


def test_a_relation_of_the_real_file_broken_is_a_failed_check(tmp_path: Path) -> None:
    """nano_dy's LHE_HTIncoming is an exact copy of LHE_HT; the built-in model (which predates
    relations) draws it on its own: a failed check, named, beside the size checks."""
    t = uproot.open(NANO)["Events"]
    path = tmp_path / "copy.parquet"
    ak.to_parquet(t.arrays(["LHE_HT", "LHE_HTIncoming", "nMuon", "Muon_pt"]), path)
    tables = fidelity.compare(str(path), load_model(None), codecs=CODECS)
    lines = fidelity.broken(tables)
    assert any("LHE_HTIncoming" in x and "LHE_HT" in x for x in lines), lines
    assert fidelity.failed(tables)[:len(lines)] == lines
    text = fidelity.report(tables, str(path), "built-in")
    assert "**Relations broken**" in text and "## Relations of the real file" in text


def test_a_relation_of_the_judged_half_alone_is_not_the_files(tmp_path: Path) -> None:
    """Two branches equal in the judged half by chance but not in the learned half are no
    relation of the file, and a copy the learned half holds too few values of cannot be
    learned: neither fails a held-out judgement (the second is named as not judged); a copy
    the learned half shows is kept by the sample."""
    n = 40
    ht = np.arange(1, n + 1, dtype=np.float32)
    chance = ht.copy()
    chance[: n // 2] += 0.5  # differs in the learned half, equal in the judged one
    # a true copy, but of three values in the learned half: too few to tell from chance
    n_tau = np.r_[np.ones(3), np.zeros(n // 2 - 3), np.ones(n // 2)].astype(np.int32)
    iso = ak.unflatten(np.arange(1, n_tau.sum() + 1, dtype=np.float32) / 7, n_tau)
    path = tmp_path / "chance.parquet"
    ak.to_parquet(ak.Array({"LHE_HT": ht, "LHE_HTIncoming": ht.copy(), "Chance": chance,
                            "nMuon": np.ones(n, np.uint32),
                            "Muon_pt": ak.Array([[float(i)] for i in range(n)]),
                            "nTau": n_tau, "Tau_rawIso": iso, "Tau_chargedIso": iso}), path)
    _, _, relations = halves(str(path), "Events", tmp_path)
    assert relations.copies["LHE_HTIncoming"] == "LHE_HT"
    assert relations.copies["Tau_chargedIso"] == "Tau_rawIso"
    assert "Chance" not in relations.copies and "Chance" not in relations.copies.values()
    result = held_out(str(path), codecs=CODECS)
    assert not fidelity.broken(result.values) and not fidelity.broken(result.whole)
    assert result.unlearnable == ("Tau_chargedIso = Tau_rawIso",)
    assert "Relations of the file not judged (1)" in heldout.report(result)
