// The ADL benchmark tasks as RDataFrame graphs (analysis/hepfmt/queries/rdf.py books them).
//
// Each task function takes the dataframe, its histogram models and its cuts from Python
// (analysis/hepfmt/queries/tasks.py is their one home) and books typed Defines / Filters: no string
// expression is JIT-compiled per file, so declaring this once per process is the whole JIT cost.
// Four-vector algebra is done in double from the stored floats with ROOT's convention for a
// negative stored mass (E^2 = p^2 + m|m|), like PtEtaPhiMVector but without its float returns.
#include <ROOT/RDataFrame.hxx>
#include <ROOT/RVec.hxx>
#include <TH1D.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace hepfmt_queries {

using ROOT::RVecD;
using ROOT::RVecF;
using ROOT::RVecI;
using Model = ROOT::RDF::TH1DModel;
using Hists = std::vector<ROOT::RDF::RResultPtr<TH1D>>;

struct P4 {
   double px = 0, py = 0, pz = 0, e = 0;
   P4 operator+(const P4 &o) const { return {px + o.px, py + o.py, pz + o.pz, e + o.e}; }
   double mass() const
   {
      const double m2 = e * e - px * px - py * py - pz * pz;
      return std::copysign(std::sqrt(std::abs(m2)), m2);
   }
   double pt() const { return std::hypot(px, py); }
};

inline P4 p4(double pt, double eta, double phi, double m)
{
   const double px = pt * std::cos(phi), py = pt * std::sin(phi), pz = pt * std::sinh(eta);
   return {px, py, pz, std::sqrt(std::max(px * px + py * py + pz * pz + m * std::abs(m), 0.0))};
}

inline double delta_phi(double a, double b)
{
   const double d = a - b;
   return d > M_PI ? d - 2 * M_PI : (d < -M_PI ? d + 2 * M_PI : d);
}

// The per-event computations, named so that distributed RDataFrame (analysis/hepfmt/queries/
// rdf_dask.py), which books string expressions on its workers, calls the same code.
inline RVecF central_jet_pt(const RVecF &pt, const RVecF &eta, double pt_min, double eta_max)
{
   return RVecF(pt[pt > pt_min && abs(eta) < eta_max]);
}

inline bool enough_jets(const RVecF &pt, double pt_min, int count)
{
   return Sum(pt > pt_min) >= count;
}

inline bool has_pair(const RVecF &pt, const RVecF &eta, const RVecF &phi, const RVecF &mass,
                     const RVecI &charge, double lo, double hi)
{
   for (std::size_t i = 0; i < pt.size(); ++i)
      for (std::size_t j = i + 1; j < pt.size(); ++j) {
         if (charge[i] == charge[j])
            continue;
         const double mm = (p4(pt[i], eta[i], phi[i], mass[i]) + p4(pt[j], eta[j], phi[j], mass[j])).mass();
         if (lo < mm && mm < hi)
            return true;
      }
   return false;
}

// (pt, largest b-tag) of the trijet closest to the target mass; empty below three jets
inline RVecD trijet(const RVecF &pt, const RVecF &eta, const RVecF &phi, const RVecF &mass,
                    const RVecF &btag, double target)
{
   const auto n = pt.size();
   std::vector<P4> jets(n);
   for (std::size_t i = 0; i < n; ++i)
      jets[i] = p4(pt[i], eta[i], phi[i], mass[i]);
   double best = std::numeric_limits<double>::infinity();
   RVecD out;
   for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = i + 1; j < n; ++j)
         for (std::size_t k = j + 1; k < n; ++k) {
            const P4 sum = jets[i] + jets[j] + jets[k];
            const double distance = std::abs(sum.mass() - target);
            if (distance < best) {
               best = distance;
               out = {sum.pt(), double(std::max({btag[i], btag[j], btag[k]}))};
            }
         }
   return out;
}

// 1 for each jet not within dr_max of any lepton above lepton_pt (ROOT's DeltaR, in double)
inline RVecI isolated(const RVecF &jet_eta, const RVecF &jet_phi, const RVecF &lep_pt,
                      const RVecF &lep_eta, const RVecF &lep_phi, double lepton_pt, double dr_max)
{
   RVecI keep(jet_eta.size(), 1);
   for (std::size_t i = 0; i < jet_eta.size(); ++i)
      for (std::size_t l = 0; l < lep_pt.size(); ++l) {
         if (!(lep_pt[l] > lepton_pt))
            continue;
         const double deta = double(jet_eta[i]) - lep_eta[l];
         const double dphi = delta_phi(jet_phi[i], lep_phi[l]);
         if (std::sqrt(deta * deta + dphi * dphi) < dr_max)
            keep[i] = 0;
      }
   return keep;
}

// the scalar sum as a 0- or 1-element vector: events without a good jet fill nothing
inline RVecD jet_ht(const RVecF &pt, const RVecF &eta, const RVecF &phi, const RVecF &mu_pt,
                    const RVecF &mu_eta, const RVecF &mu_phi, const RVecF &el_pt,
                    const RVecF &el_eta, const RVecF &el_phi, double jet_pt, double lepton_pt,
                    double dr_max)
{
   const auto good = pt > jet_pt && isolated(eta, phi, mu_pt, mu_eta, mu_phi, lepton_pt, dr_max) &&
                     isolated(eta, phi, el_pt, el_eta, el_phi, lepton_pt, dr_max);
   if (Sum(good) == 0)
      return RVecD{};
   return RVecD{Sum(RVecD(pt[good]))};
}

// transverse mass of MET and the leading lepton outside the same-flavour opposite-charge pair
// closest to the target mass; empty without such a pair and a third lepton
inline RVecD lepton_mt(const RVecF &mu_pt, const RVecF &mu_eta, const RVecF &mu_phi,
                       const RVecF &mu_m, const RVecI &mu_q, const RVecF &el_pt,
                       const RVecF &el_eta, const RVecF &el_phi, const RVecF &el_m,
                       const RVecI &el_q, float met, float met_phi, double target)
{
   const auto pt = Concatenate(mu_pt, el_pt), eta = Concatenate(mu_eta, el_eta);
   const auto phi = Concatenate(mu_phi, el_phi), mass = Concatenate(mu_m, el_m);
   const auto charge = Concatenate(mu_q, el_q);
   const std::size_t n = pt.size(), n_mu = mu_pt.size();
   if (n < 3)
      return RVecD{};
   double best = std::numeric_limits<double>::infinity();
   std::size_t a = n, b = n;
   for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = i + 1; j < n; ++j) {
         if (charge[i] == charge[j] || (i < n_mu) != (j < n_mu))
            continue;
         const double distance =
            std::abs((p4(pt[i], eta[i], phi[i], mass[i]) + p4(pt[j], eta[j], phi[j], mass[j])).mass() - target);
         if (distance < best) {
            best = distance;
            a = i;
            b = j;
         }
      }
   if (a == n)
      return RVecD{};
   std::size_t lead = n;
   for (std::size_t k = 0; k < n; ++k)
      if (k != a && k != b && (lead == n || pt[k] > pt[lead]))
         lead = k;
   const double dphi = delta_phi(met_phi, phi[lead]);
   return RVecD{std::sqrt(2.0 * pt[lead] * double(met) * (1.0 - std::cos(dphi)))};
}

// The tasks as typed graphs (no string expression to JIT per file).
Hists task1(ROOT::RDF::RNode df, const std::vector<Model> &m)
{
   return {df.Histo1D<float>(m[0], "MET_pt")};
}

Hists task2(ROOT::RDF::RNode df, const std::vector<Model> &m)
{
   return {df.Histo1D<RVecF>(m[0], "Jet_pt")};
}

Hists task3(ROOT::RDF::RNode df, const std::vector<Model> &m, double pt_min, double eta_max)
{
   auto central = [=](const RVecF &pt, const RVecF &eta) {
      return central_jet_pt(pt, eta, pt_min, eta_max);
   };
   return {df.Define("central_jet_pt", central, {"Jet_pt", "Jet_eta"})
              .Histo1D<RVecF>(m[0], "central_jet_pt")};
}

Hists task4(ROOT::RDF::RNode df, const std::vector<Model> &m, double pt_min, int count)
{
   auto enough = [=](const RVecF &pt) { return enough_jets(pt, pt_min, count); };
   return {df.Filter(enough, {"Jet_pt"}).Histo1D<float>(m[0], "MET_pt")};
}

Hists task5(ROOT::RDF::RNode df, const std::vector<Model> &m, double lo, double hi)
{
   auto pair = [=](const RVecF &pt, const RVecF &eta, const RVecF &phi, const RVecF &mass,
                   const RVecI &charge) { return has_pair(pt, eta, phi, mass, charge, lo, hi); };
   return {df.Filter(pair, {"Muon_pt", "Muon_eta", "Muon_phi", "Muon_mass", "Muon_charge"})
              .Histo1D<float>(m[0], "MET_pt")};
}

Hists task6(ROOT::RDF::RNode df, const std::vector<Model> &m, double target)
{
   auto best = [=](const RVecF &pt, const RVecF &eta, const RVecF &phi, const RVecF &mass,
                   const RVecF &btag) { return trijet(pt, eta, phi, mass, btag, target); };
   auto node = df.Define("trijet", best, {"Jet_pt", "Jet_eta", "Jet_phi", "Jet_mass", "Jet_btagDeepFlavB"})
                  .Filter([](const RVecD &t) { return t.size() == 2; }, {"trijet"})
                  .Define("trijet_pt", [](const RVecD &t) { return t[0]; }, {"trijet"})
                  .Define("trijet_btag", [](const RVecD &t) { return t[1]; }, {"trijet"});
   return {node.Histo1D<double>(m[0], "trijet_pt"), node.Histo1D<double>(m[1], "trijet_btag")};
}

Hists task7(ROOT::RDF::RNode df, const std::vector<Model> &m, double jet_pt, double lepton_pt,
            double dr_max)
{
   auto ht = [=](const RVecF &pt, const RVecF &eta, const RVecF &phi, const RVecF &mu_pt,
                 const RVecF &mu_eta, const RVecF &mu_phi, const RVecF &el_pt, const RVecF &el_eta,
                 const RVecF &el_phi) {
      return jet_ht(pt, eta, phi, mu_pt, mu_eta, mu_phi, el_pt, el_eta, el_phi, jet_pt, lepton_pt,
                    dr_max);
   };
   return {df.Define("jet_ht", ht, {"Jet_pt", "Jet_eta", "Jet_phi", "Muon_pt", "Muon_eta", "Muon_phi",
                                    "Electron_pt", "Electron_eta", "Electron_phi"})
              .Histo1D<RVecD>(m[0], "jet_ht")};
}

Hists task8(ROOT::RDF::RNode df, const std::vector<Model> &m, double target)
{
   auto mt = [=](const RVecF &mu_pt, const RVecF &mu_eta, const RVecF &mu_phi, const RVecF &mu_m,
                 const RVecI &mu_q, const RVecF &el_pt, const RVecF &el_eta, const RVecF &el_phi,
                 const RVecF &el_m, const RVecI &el_q, float met, float met_phi) {
      return lepton_mt(mu_pt, mu_eta, mu_phi, mu_m, mu_q, el_pt, el_eta, el_phi, el_m, el_q, met,
                       met_phi, target);
   };
   return {df.Define("lepton_mt", mt, {"Muon_pt", "Muon_eta", "Muon_phi", "Muon_mass", "Muon_charge",
                                       "Electron_pt", "Electron_eta", "Electron_phi", "Electron_mass",
                                       "Electron_charge", "MET_pt", "MET_phi"})
              .Histo1D<RVecD>(m[0], "lepton_mt")};
}

} // namespace hepfmt_queries
