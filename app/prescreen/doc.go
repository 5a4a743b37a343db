// Package prescreen pre-screens the patients of a cohort for clinical
// trials (issue 19 item 6): it reads a structured summary of each patient
// from the source (age, sex, diagnoses, medications, the latest lab values
// with their dates), ranks the trials of a trials source for each patient
// with the trial matching pipeline (app/trials), and checks the lab-value,
// age and sex criteria of the best-ranked trials deterministically against
// the structured values — not the narrative — citing the value and its
// date. With a model, the pipeline's criterion-level eligibility of the
// top trials fills in the criteria that have no structured check. The
// result is a patient × trial matrix with eligible / not eligible /
// unknown per criterion and overall. UI-free: app.Prescreen serves both
// front ends.
package prescreen
