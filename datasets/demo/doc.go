// Package demo generates Clinsight's demo workspace: one SQLite file of
// synthetic (never real) hospital patients shaped like the MIMIC-IV v2.2
// "hosp" module, plus an imaging-metadata table shaped like the Imaging Data
// Commons dicom_all table, so that every screen and the cohort-discovery
// pipeline have sensible data to work on without any real patient data.
//
// Generation is deterministic: the same Options.Seed, Options.Patients and
// Version give identical table contents on a given GOARCH (floating-point
// fused multiply-add on some architectures may change a rare last digit, and
// with it later draws). Dates are not shifted: hospital
// data covers CollectionStart to CollectionEnd (2015–2024), recorded in the
// clinsight_metadata table so that later stages can refuse questions about
// other periods. Diagnoses of admissions before 2015-10-01 (the US switch to
// ICD-10-CM) use ICD-9-CM codes, later ones ICD-10-CM, as in MIMIC-IV.
//
// dicom_all holds one row per DICOM instance (image), as IDC's table does;
// its dates follow each collection's acquisition period, not the hospital's.
// Identifiers follow the public formats (MIMIC-style subject_id and hadm_id,
// collection-style PatientID, UIDs under the 1.2.826.0.1.3680043.8.498 root)
// but are random; pharmacy codes are invented and NDC/GSN are left empty.
package demo
