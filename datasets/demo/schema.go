package demo

// The SQL below keeps the MIMIC-IV v2.2 hosp and IDC dicom_all table and
// column names. Column comments are kept by SQLite in sqlite_schema.sql, so
// the schema catalog and the cohort pipeline can show them to the model.

// schemaSQL creates the tables, in insertion order.
var schemaSQL = []string{
	`CREATE TABLE clinsight_metadata (
  key   TEXT NOT NULL PRIMARY KEY, -- e.g. collection_start, collection_end, generator, seed, version
  value TEXT NOT NULL
)`,
	`CREATE TABLE d_icd_diagnoses (
  icd_code    TEXT NOT NULL,    -- ICD code without the dot, e.g. 'I214' for I21.4
  icd_version INTEGER NOT NULL, -- 9 (ICD-9-CM) or 10 (ICD-10-CM)
  long_title  TEXT NOT NULL,    -- official long title of the code
  PRIMARY KEY (icd_code, icd_version)
)`,
	`CREATE TABLE d_labitems (
  itemid   INTEGER NOT NULL PRIMARY KEY, -- laboratory test identifier (MIMIC-IV itemid)
  label    TEXT NOT NULL,                -- test name, e.g. 'Creatinine'
  fluid    TEXT NOT NULL,                -- specimen fluid: 'Blood' or 'Urine'
  category TEXT NOT NULL                 -- 'Chemistry', 'Hematology' or 'Blood Gas'
)`,
	`CREATE TABLE patients (
  subject_id        INTEGER NOT NULL PRIMARY KEY, -- patient identifier
  gender            TEXT NOT NULL,    -- 'M' or 'F'
  anchor_age        INTEGER NOT NULL, -- age in anchor_year; ages above 89 are recorded as 91
  anchor_year       INTEGER NOT NULL, -- year of the first admission (years are not shifted)
  anchor_year_group TEXT NOT NULL,    -- three-year range containing anchor_year, e.g. '2017 - 2019'
  dod               DATE              -- date of death in or out of hospital (up to one year after the last discharge); NULL if not known to have died
)`,
	`CREATE TABLE admissions (
  subject_id           INTEGER NOT NULL REFERENCES patients (subject_id),
  hadm_id              INTEGER NOT NULL PRIMARY KEY, -- hospital admission identifier
  admittime            TIMESTAMP NOT NULL,
  dischtime            TIMESTAMP NOT NULL,
  deathtime            TIMESTAMP,         -- time of in-hospital death, NULL otherwise
  admission_type       TEXT NOT NULL,     -- e.g. 'EW EMER.', 'EU OBSERVATION', 'URGENT', 'ELECTIVE', 'SURGICAL SAME DAY ADMISSION'
  admit_provider_id    TEXT,
  admission_location   TEXT,              -- e.g. 'EMERGENCY ROOM', 'PHYSICIAN REFERRAL', 'TRANSFER FROM HOSPITAL'
  discharge_location   TEXT,              -- e.g. 'HOME', 'HOME HEALTH CARE', 'SKILLED NURSING FACILITY', 'DIED'
  insurance            TEXT NOT NULL,     -- 'Medicare', 'Medicaid' or 'Other'
  language             TEXT NOT NULL,     -- 'ENGLISH' or '?'
  marital_status       TEXT,              -- 'MARRIED', 'SINGLE', 'WIDOWED', 'DIVORCED'
  race                 TEXT NOT NULL,     -- e.g. 'WHITE', 'BLACK/AFRICAN AMERICAN', 'HISPANIC OR LATINO', 'ASIAN'
  edregtime            TIMESTAMP,         -- emergency department registration, NULL when not admitted through the ED
  edouttime            TIMESTAMP,
  hospital_expire_flag INTEGER NOT NULL   -- 1 when the patient died in hospital
)`,
	`CREATE TABLE diagnoses_icd (
  subject_id  INTEGER NOT NULL REFERENCES patients (subject_id),
  hadm_id     INTEGER NOT NULL REFERENCES admissions (hadm_id),
  seq_num     INTEGER NOT NULL, -- priority of the diagnosis within the admission, 1 = principal
  icd_code    TEXT NOT NULL,    -- join d_icd_diagnoses on icd_code and icd_version
  icd_version INTEGER NOT NULL, -- 9 before 2015-10-01, 10 from then on
  FOREIGN KEY (icd_code, icd_version) REFERENCES d_icd_diagnoses (icd_code, icd_version)
)`,
	`CREATE TABLE labevents (
  labevent_id     INTEGER NOT NULL PRIMARY KEY,
  subject_id      INTEGER NOT NULL REFERENCES patients (subject_id),
  hadm_id         INTEGER REFERENCES admissions (hadm_id),
  specimen_id     INTEGER NOT NULL, -- results drawn on the same specimen share it
  itemid          INTEGER NOT NULL REFERENCES d_labitems (itemid),
  charttime       TIMESTAMP NOT NULL,
  storetime       TIMESTAMP,
  value           TEXT,    -- result as reported, e.g. '1.2' or '<0.01'
  valuenum        REAL,    -- numeric result
  valueuom        TEXT,    -- unit of measurement
  ref_range_lower REAL,
  ref_range_upper REAL,
  flag            TEXT,    -- 'abnormal' when outside the reference range, NULL otherwise
  priority        TEXT,    -- 'STAT' or 'ROUTINE'
  comments        TEXT
)`,
	`CREATE TABLE prescriptions (
  subject_id        INTEGER NOT NULL REFERENCES patients (subject_id),
  hadm_id           INTEGER NOT NULL REFERENCES admissions (hadm_id),
  pharmacy_id       INTEGER NOT NULL,
  poe_id            TEXT,
  starttime         TIMESTAMP,
  stoptime          TIMESTAMP,
  drug_type         TEXT NOT NULL, -- 'MAIN', 'BASE' (IV fluid base) or 'ADDITIVE'
  drug              TEXT NOT NULL, -- drug name, e.g. 'Lisinopril', 'MetFORMIN (Glucophage)'; compare case-insensitively
  formulary_drug_cd TEXT,
  gsn               TEXT,          -- always NULL in this synthetic data
  ndc               TEXT,          -- always NULL in this synthetic data
  prod_strength     TEXT,
  form_rx           TEXT,
  dose_val_rx       TEXT,          -- dose per administration, e.g. '40' or '0-10'
  dose_unit_rx      TEXT,          -- e.g. 'mg', 'UNIT', 'mEq'
  form_val_disp     TEXT,
  form_unit_disp    TEXT,
  doses_per_24_hrs  REAL,
  route             TEXT           -- e.g. 'PO', 'IV', 'SC', 'IH', 'SL', 'TD'
)`,
	`CREATE TABLE dicom_all (
  collection_id         TEXT NOT NULL,  -- IDC collection, e.g. 'nlst', 'tcga_luad', 'upenn_gbm'
  PatientID             TEXT NOT NULL,
  PatientSex            TEXT,           -- 'M', 'F' or 'O'
  PatientAge            TEXT,           -- DICOM age string, e.g. '063Y' (or '011M' for infants); NULL when unknown
  Modality              TEXT NOT NULL,  -- CT, MR, PT, CR, DX, MG, US, SM, SEG, RTSTRUCT
  BodyPartExamined      TEXT,           -- e.g. CHEST, LUNG, BREAST, BRAIN, HEAD, ABDOMEN, PELVIS, PROSTATE, LIVER, KIDNEY, COLON
  StudyDescription      TEXT,
  SeriesDescription     TEXT,
  SequenceName          TEXT,           -- MR pulse sequence, e.g. '*tse2d1_15'; NULL for other modalities
  Manufacturer          TEXT,
  ManufacturerModelName TEXT,
  StationName           TEXT,
  InstitutionName       TEXT,
  InstitutionAddress    TEXT,
  instance_size         INTEGER NOT NULL, -- size of the DICOM file in bytes
  collection_cancerType TEXT,             -- e.g. 'Lung Cancer', 'Breast Cancer', 'Glioblastoma'
  tcia_species          TEXT,
  StudyInstanceUID      TEXT NOT NULL,
  SeriesInstanceUID     TEXT NOT NULL,
  SOPInstanceUID        TEXT NOT NULL,    -- one row per instance (image)
  SOPClassUID           TEXT,
  TransferSyntaxUID     TEXT,
  StudyDate             DATE,
  SeriesNumber          INTEGER,
  InstanceNumber        INTEGER,
  SliceThickness        REAL,             -- mm
  PixelSpacing          TEXT,             -- row\column spacing in mm, e.g. '0.703125\0.703125'
  "Rows"                INTEGER,
  "Columns"             INTEGER
)`,
}

// indexSQL creates the indexes once the rows are in.
var indexSQL = []string{
	`CREATE INDEX admissions_subject_id_idx ON admissions (subject_id)`,
	`CREATE INDEX diagnoses_icd_subject_id_idx ON diagnoses_icd (subject_id)`,
	`CREATE INDEX diagnoses_icd_hadm_id_idx ON diagnoses_icd (hadm_id)`,
	`CREATE INDEX diagnoses_icd_icd_code_idx ON diagnoses_icd (icd_code, icd_version)`,
	`CREATE INDEX labevents_subject_id_idx ON labevents (subject_id)`,
	`CREATE INDEX labevents_hadm_id_idx ON labevents (hadm_id)`,
	`CREATE INDEX labevents_itemid_idx ON labevents (itemid)`,
	`CREATE INDEX prescriptions_subject_id_idx ON prescriptions (subject_id)`,
	`CREATE INDEX prescriptions_hadm_id_idx ON prescriptions (hadm_id)`,
	`CREATE INDEX dicom_all_collection_id_idx ON dicom_all (collection_id)`,
	`CREATE INDEX dicom_all_modality_idx ON dicom_all (Modality)`,
	`CREATE INDEX dicom_all_patient_id_idx ON dicom_all (PatientID)`,
}

// Table names, in the order Summary lists them.
const (
	tableMetadata      = "clinsight_metadata"
	tableICDDiagnoses  = "d_icd_diagnoses"
	tableLabItems      = "d_labitems"
	tablePatients      = "patients"
	tableAdmissions    = "admissions"
	tableDiagnoses     = "diagnoses_icd"
	tableLabEvents     = "labevents"
	tablePrescriptions = "prescriptions"
	tableDicomAll      = "dicom_all"
)

// tableColumns gives each table's column count, for building INSERTs.
var tableColumns = []struct {
	name string
	cols int
}{
	{tableMetadata, 2},
	{tableICDDiagnoses, 3},
	{tableLabItems, 4},
	{tablePatients, 6},
	{tableAdmissions, 16},
	{tableDiagnoses, 5},
	{tableLabEvents, 15},
	{tablePrescriptions, 19},
	{tableDicomAll, 29},
}

// dicomSeriesArgs is the number of arguments of dicomSeriesSQL.
const dicomSeriesArgs = 29

// dicomSeriesSQL inserts every instance of one series. Arguments ?1 to ?26
// are the series' constant columns in table order (without instance_size,
// SOPInstanceUID and InstanceNumber), ?27 is the instance count, ?28 the
// typical instance size and ?29 its kind: 0 fixed-size pixel data with
// small header variations, 1 a whole-slide pyramid whose levels shrink
// fourfold, 2 compressed or structured objects of varying size. Instance
// numbers, SOP Instance UIDs and sizes derive from the instance number, so
// the output stays deterministic.
const dicomSeriesSQL = `INSERT INTO dicom_all
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?27)
SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14,
  CASE ?29
    WHEN 1 THEN max(1000000, ?28 >> (2 * (i - 1)))
    WHEN 2 THEN ?28 + (i * 2654435761) % 4096
    ELSE ?28 + ((i * 40503) % 64) * 8
  END,
  ?15, ?16, ?17, ?18, ?18 || '.' || i, ?19, ?20, ?21, ?22, i, ?23, ?24, ?25, ?26
FROM n`
