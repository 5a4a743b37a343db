// Package disclosure decides what of a query result may be shown or may
// leave the machine: the disclosure policy of a data source (row-level or
// aggregate-only, minimum cell size k), small-cell suppression of aggregate
// results, the identifier columns of a result, and the pseudonyms and date
// shifts of a patient-level export. It is pure logic over datasets.Result:
// the caller (package app) runs the queries.
//
// # Small-cell suppression
//
// Suppress returns a copy of an aggregate result in which cells that could
// identify fewer than k people are replaced by [Suppressed] ("<11"):
//
//   - a count cell (count(...), or an integer column named like a count:
//     n, count, num_*, n_*, *_count, patients, total, …) with 1 ≤ value < k
//     (0 stays 0), or any count cell of a row that counts fewer than k
//     individuals (30 admissions of 2 patients);
//   - any other statistic of an aggregate row (avg, sum, min, max, median,
//     stdev, group_concat, …) when the row comes from fewer than k
//     individuals, or when that number is unknown (conservative);
//   - complementary suppression: a count (or sum) column with exactly one
//     primarily suppressed cell among two or more also loses its next
//     smallest non-zero cell, since a known total would let the hidden
//     cell be recomputed.
//
// # Individuals
//
// The number of individuals behind each row is computed by the database
// itself: for a query that aggregates at its top level (see [Analyze]), the
// same query with count(DISTINCT <individual column>) appended to its
// select list ([Augment]). The individual column comes from the schema:
//
//	profile                      individual column
//	MIMIC-IV, EHRSQL, the demo   subject_id
//	OMOP CDM                     person_id
//	IDC (dicom_all), the demo    PatientID
//	generated (CSV, SQLite,      the first of subject_id, person_id,
//	PostgreSQL)                  patient_id, PatientID, patient, mrn
//	                             that the query can see
//
// ([IndividualColumns]). When no candidate works (a column absent or
// ambiguous in every form) a count column of the row stands in, else the
// row's individuals are unknown and its statistics are suppressed. The
// Report says which column was used.
//
// # Identifiers
//
// [Classify] marks the direct identifiers of a result (patient, admission,
// stay, visit and person ids, note text, names, MRN-like columns, exact
// dates of birth and death, image UIDs) and its quasi-identifiers (ages —
// ages over 89 in particular —, zip codes, exact dates): one name-based
// classifier plus per-profile tables (profileIdentifiers), documented there.
//
// # Pseudonyms
//
// A [Pseudonymizer] holds a random per-export key (crypto/rand) that is
// never written anywhere: a direct identifier becomes the first 16 hex
// digits of HMAC-SHA256(key, column kind, value), stable within one export
// and unrelated across exports; dates can be shifted by a per-patient
// number of days derived the same way, which keeps the intervals within
// each patient.
package disclosure
