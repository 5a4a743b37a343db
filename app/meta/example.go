package meta

import _ "embed"

// ExampleBCG is a study table to learn the screen with: the 13 trials of
// the BCG vaccine against tuberculosis (metadat's dat.bcg; Colditz et al.,
// JAMA 1994), as events and totals per arm (ai, n1i vaccinated; ci, n2i
// controls). Its random-effects (REML) risk ratio is 0.4894 [0.3441, 0.6962]
// (Viechtbauer 2010).
//
//go:embed examples/bcg.csv
var ExampleBCG string
