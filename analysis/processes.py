"""Physics processes: how each sample's content differs from the Drell-Yan reference.

The 2018 study used 13 CMS samples because their content differs: Drell-Yan has more muons than
ttbar, ttbar more jets and b-tags, QCD many jets and few leptons, ZeroBias almost nothing. A
process here is a set of multiplicity scale factors per collection (relative to the reference
means in :data:`BASE_MULTIPLICITY`, measured on ``nano_dy.root``) and a trigger-rate factor
(triggers fire more often in samples with hard leptons/jets). Collections not named keep scale 1.
"""

from __future__ import annotations

from dataclasses import dataclass, field

#: Mean multiplicity per collection in the reference sample (nano_dy.root, DY+jets).
#: Collections with a fixed length in real NanoAOD (weights) are marked fixed.
BASE_MULTIPLICITY: dict[str, float] = {
    "CorrT1METJet": 7.1, "Electron": 0.62, "FatJet": 0.3, "FsrPhoton": 0.05, "GenJetAK8": 0.3,
    "GenJet": 3.2, "GenPart": 26.7, "SubGenJetAK8": 0.5, "GenVisTau": 0.38, "IsoTrack": 0.3,
    "Jet": 4.7, "LHEPart": 2.55, "Muon": 0.45, "Photon": 0.7, "GenDressedLepton": 0.72,
    "Tau": 0.72, "TrigObj": 3.2, "SV": 0.4, "SubJet": 0.6,
    "LHEReweightingWeight": 0.0,
}
FIXED_MULTIPLICITY: dict[str, int] = {
    "LHEPdfWeight": 33, "LHEScaleWeight": 9, "PSWeight": 4, "OtherPV": 3, "SoftActivityJet": 6,
}


@dataclass(frozen=True)
class Process:
    name: str
    why: str
    scale: dict[str, float] = field(default_factory=dict)
    trigger_rate: float = 1.0

    def mean(self, collection: str) -> float:
        return BASE_MULTIPLICITY.get(collection, 1.0) * self.scale.get(collection, 1.0)


PROCESSES: dict[str, Process] = {p.name: p for p in (
    Process("DYJetsToLL", "reference: two leptons from Z, few jets", {}, 1.0),
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
