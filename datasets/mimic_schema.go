package datasets

// MIMICIVSchemaSQL returns the MIMIC-IV v2.2 table definitions ImportMIMIC
// uses, in PostgreSQL types as mimic-code's build script has them: one
// "CREATE TABLE module.name (" per table (module hosp or icu), columns in
// the order of the CSV files, no constraints. Loaders into a PostgreSQL
// server (tests, sites trying Clinsight) map module to mimic-code's
// schemas mimiciv_hosp and mimiciv_icu.
func MIMICIVSchemaSQL() string { return mimicIV22Schema }
