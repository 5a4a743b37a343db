// Package meta is Clinsight's meta-analysis engine: per-study effect sizes,
// fixed- and random-effects pooling, heterogeneity statistics and forest
// plots, computed to agree with R's metafor package (version 3.8-1).
//
// The flow is LoadFile (CSV or .xlsx), LoadCSV or ParseRows (already-parsed
// rows) → Analyze → Result, which marshals to JSON with metafor's names, is
// drawn by WriteForestPlot and is written to an Excel workbook, with the
// studies, the plots and their provenance, by ExportReport (from Run's
// Report).
//
// # What is reproduced from metafor
//
//   - Effect sizes follow escalc: log odds ratio (OR), log risk ratio (RR)
//     and risk difference (RD) from 2x2 counts; mean difference (MD) and
//     Hedges' g (SMD, exact gamma-function correction, vtype="LS" variance)
//     from means, SDs and group sizes; generic inverse variance (GEN, GENRatio)
//     from a reported estimate and its confidence interval; single-arm
//     proportions from events xi and totals ni: raw (PR, vtype "LS"), logit
//     (PLO) and Freeman–Tukey double arcsine (PFT), shown back-transformed
//     as metafor's transf.ilogit and transf.ipft.hm (Miller's inverse at the
//     harmonic mean of the study sizes, Result.HarmonicN).
//   - Zero cells: add = 1/2 to every cell of a study with a zero cell
//     (add=1/2, to="only0"); to="all", "if0all" and "none" are available.
//     For PR and PLO the same 1/2 is added to the events and non-events of
//     studies with no events or only events; PFT needs none (add=0).
//   - Double-zero studies (ai=ci=0 or bi=di=0): escalc and rma.uni keep them by
//     default (drop00=FALSE): after the 1/2 correction they contribute a log OR
//     of 0 and a finite variance. rma.mh pools the uncorrected tables (a
//     double-zero table adds nothing to the Mantel–Haenszel sums but counts in
//     k) and computes its Q statistic from escalc with drop00=TRUE, so
//     double-zero studies are left out of QE, I² and H² there. Both
//     behaviours are reproduced; Options.Drop00 drops them for rma.uni too.
//   - Pooling follows rma.uni (EE and the τ² estimators DL, REML, ML, HE,
//     HS, SJ, PM, EB with metafor's control defaults; test "z" or "knha"),
//     rma.peto (PETO: Peto's one-step odds ratio on the uncorrected tables,
//     per-study values from escalc "PETO" with the 1/2 correction) and
//     rma.mh (MH for OR with the Robins–Breslow–Greenland variance, RR and RD
//     with metafor's variances, no continuity correction). REML uses
//     metafor's Fisher scoring: Hedges' estimator as the starting value, step
//     halving to keep τ² ≥ 0, convergence when τ² changes by less than 1e-5
//     (metafor's control threshold), and metafor's check that τ² is not a
//     worse local maximum than τ² = 0.
//   - Iterative estimators follow metafor's control: PM searches [0,
//     max(100, 10·mad(yi)²)] with R's uniroot (Brent, tol eps^¼) stepped
//     exactly as R's zeroin; ML and EB use Fisher scoring as REML does.
//   - Random-effects results carry the Q-profile confidence intervals of τ²,
//     I² and H² (confint.rma.uni, type "QP").
//   - Meta-regression (Regress), subgroups (Subgroups), small-study effects
//     (Egger, Begg, TrimFillAnalysis) and sensitivity analyses (LeaveOneOut,
//     Cumulative, Influence) reproduce rma.uni with mods, regtest, ranktest,
//     trimfill, leave1out, cumul and influence.rma.uni; Run executes a Plan
//     of them with a template plain-language summary, ExportReport writes
//     them all to a workbook. testdata/reference.R computes the metafor
//     values the tests compare with (within 1e-8 relative; measured ≤ 4e-12).
//   - I² and H² for random-effects models use metafor's "typical" sampling
//     variance (k−1)/tr(P); prediction intervals are those of predict.rma
//     (the same critical value as the confidence interval).
//
// Missing values (NA or empty cells) are an error unless
// InputSpec.SkipMissing is set, in which case the study is omitted as
// metafor's na.omit does and the result carries a note.
package meta
