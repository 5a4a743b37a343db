// Package datasets is Clinsight's SQLite data layer: opening databases
// read-only or read-write, the read-only query runner through which every SQL
// statement not written by Clinsight itself must pass, the schema catalog,
// the importers (CSV, MIMIC-IV, existing SQLite files) and the FTS5 indexes.
//
// It depends on nothing above it: no model, no UI, no workspace.
package datasets
