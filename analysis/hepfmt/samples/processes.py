"""Physics processes: how each sample's content differs from the reference sample the model was
learned from (CMS Drell-Yan NanoAOD, ``nano_dy.root``).

The 2018 study used 13 CMS samples because their content differs: Drell-Yan has more muons than
ttbar, ttbar more jets and b-tags, QCD many jets and few leptons, ZeroBias almost nothing. A
process here is a set of multiplicity scale factors per collection (``Jet``, found by name
whatever the file's counters; applied to the learned multiplicity distribution) and a
trigger-rate factor (applied to the learned firing rates of ``HLT_*``/``L1_*`` bits: triggers
fire more often in samples with hard leptons and jets).
Collections not named keep the learned distribution. The factors are round numbers chosen from
the physics of each process (the ``why``), not fits: they make the samples differ the way real
samples differ, which is what the spread over samples in the tables needs.
"""

from __future__ import annotations

from dataclasses import dataclass, field

#: Bool branches whose rates a process's trigger-rate factor shifts.
TRIGGER_PREFIXES = ("HLT_", "L1_")


@dataclass(frozen=True)
class Process:
    name: str
    why: str
    scale: dict[str, float] = field(default_factory=dict)
    trigger_rate: float = 1.0


PROCESSES: dict[str, Process] = {p.name: p for p in (
    Process("DYJetsToLL", "the reference: Z -> two leptons, few jets (the model as learned)"),
    Process("TTJets", "ttbar: many jets incl. b, leptons from W, more gen particles",
            {"Jet": 1.7, "GenJet": 1.8, "Muon": 0.7, "Electron": 0.9, "GenPart": 1.8,
             "SV": 3.0, "FatJet": 2.0, "TrigObj": 1.5, "CorrT1METJet": 1.3}, 1.3),
    Process("WJetsToLNu", "one lepton + MET, jets from ISR", {"Muon": 0.8, "Electron": 0.8,
            "Jet": 0.9}, 0.9),
    Process("QCD", "multijet: many jets, almost no prompt leptons",
            {"Jet": 2.0, "GenJet": 2.0, "Muon": 0.2, "Electron": 0.3, "FatJet": 3.0,
             "SubJet": 3.0, "TrigObj": 2.0, "GenPart": 1.5}, 0.7),
    Process("WW", "two W: two leptons, few jets", {"Jet": 0.7, "Muon": 1.1, "Electron": 1.2}, 1.0),
    Process("WZ", "three leptons", {"Jet": 0.8, "Muon": 1.5, "Electron": 1.5}, 1.1),
    Process("ZZ", "four leptons", {"Jet": 0.7, "Muon": 2.0, "Electron": 2.0}, 1.1),
    Process("ST_tW", "single top + W: b jet, one or two leptons",
            {"Jet": 1.3, "Muon": 0.9, "Electron": 0.9, "SV": 2.0, "GenPart": 1.4}, 1.1),
    Process("GluGluHToZZTo4L", "Higgs to four leptons", {"Muon": 2.5, "Electron": 2.5,
            "Jet": 0.8}, 1.2),
    Process("GluGluHToGG", "Higgs to two photons", {"Photon": 3.0, "Muon": 0.2, "Electron": 0.3,
            "Jet": 0.9}, 1.0),
    Process("ttH", "ttbar + Higgs: the busiest events",
            {"Jet": 2.2, "GenJet": 2.2, "Muon": 0.8, "Electron": 0.9, "GenPart": 2.5,
             "SV": 3.5, "FatJet": 2.5, "TrigObj": 1.8, "Photon": 1.3}, 1.4),
    Process("GJets", "photon + jets", {"Photon": 2.0, "Jet": 1.2, "Muon": 0.1,
            "Electron": 0.2}, 0.8),
    Process("ZeroBias", "unbiased collisions: soft, nearly empty, triggers rarely fire",
            {"Jet": 0.4, "GenJet": 0.3, "Muon": 0.05, "Electron": 0.05, "Photon": 0.3,
             "Tau": 0.3, "TrigObj": 0.3, "GenPart": 0.6, "SV": 0.2, "FatJet": 0.1}, 0.2),
)}
