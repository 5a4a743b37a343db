-- MIMIC-IV v2.2 column types, hosp and icu modules.
--
-- Transcribed from the PostgreSQL build script of the MIMIC Code Repository
-- (github.com/MIT-LCP/mimic-code, mimic-iv/buildmimic/postgres/create.sql as
-- released for MIMIC-IV v2.2, mimic-code v2.4.0; schemas mimiciv_hosp and
-- mimiciv_icu). Only table names, column names and PostgreSQL types are kept:
-- NOT NULL constraints are dropped and columns are listed in the order of
-- the v2.2 CSV files.
--
-- ImportMIMIC (import_mimic.go) reads this file and maps the types to SQLite:
--   INTEGER, SMALLINT, BIGINT        -> INTEGER
--   NUMERIC, DOUBLE PRECISION, REAL,
--   FLOAT                            -> REAL
--   VARCHAR(n), CHAR(n), TEXT        -> TEXT
--   TIMESTAMP, TIMESTAMP(n)          -> TIMESTAMP (kept, bound as text)
--   DATE                             -> DATE      (kept, bound as text)
-- Format understood by the reader: "CREATE TABLE module.name (" on one line,
-- then one "column TYPE," per line, then ");". Lines starting with "--" are
-- comments.

-- hosp module

CREATE TABLE hosp.admissions (
  subject_id INTEGER,
  hadm_id INTEGER,
  admittime TIMESTAMP,
  dischtime TIMESTAMP,
  deathtime TIMESTAMP,
  admission_type VARCHAR(40),
  admit_provider_id VARCHAR(10),
  admission_location VARCHAR(60),
  discharge_location VARCHAR(60),
  insurance VARCHAR(255),
  language VARCHAR(10),
  marital_status VARCHAR(30),
  race VARCHAR(80),
  edregtime TIMESTAMP,
  edouttime TIMESTAMP,
  hospital_expire_flag SMALLINT
);

CREATE TABLE hosp.d_hcpcs (
  code CHAR(5),
  category SMALLINT,
  long_description TEXT,
  short_description VARCHAR(180)
);

CREATE TABLE hosp.diagnoses_icd (
  subject_id INTEGER,
  hadm_id INTEGER,
  seq_num INTEGER,
  icd_code CHAR(7),
  icd_version SMALLINT
);

CREATE TABLE hosp.d_icd_diagnoses (
  icd_code CHAR(7),
  icd_version SMALLINT,
  long_title VARCHAR(255)
);

CREATE TABLE hosp.d_icd_procedures (
  icd_code CHAR(7),
  icd_version SMALLINT,
  long_title VARCHAR(222)
);

CREATE TABLE hosp.d_labitems (
  itemid INTEGER,
  label VARCHAR(50),
  fluid VARCHAR(50),
  category VARCHAR(50)
);

CREATE TABLE hosp.drgcodes (
  subject_id INTEGER,
  hadm_id INTEGER,
  drg_type VARCHAR(4),
  drg_code VARCHAR(10),
  description VARCHAR(195),
  drg_severity SMALLINT,
  drg_mortality SMALLINT
);

CREATE TABLE hosp.emar_detail (
  subject_id INTEGER,
  emar_id VARCHAR(25),
  emar_seq INTEGER,
  parent_field_ordinal VARCHAR(10),
  administration_type VARCHAR(50),
  pharmacy_id INTEGER,
  barcode_type VARCHAR(4),
  reason_for_no_barcode TEXT,
  complete_dose_not_given VARCHAR(5),
  dose_due VARCHAR(100),
  dose_due_unit VARCHAR(50),
  dose_given VARCHAR(255),
  dose_given_unit VARCHAR(50),
  will_remainder_of_dose_be_given VARCHAR(5),
  product_amount_given VARCHAR(30),
  product_unit VARCHAR(30),
  product_code VARCHAR(30),
  product_description VARCHAR(255),
  product_description_other VARCHAR(255),
  prior_infusion_rate VARCHAR(40),
  infusion_rate VARCHAR(40),
  infusion_rate_adjustment VARCHAR(50),
  infusion_rate_adjustment_amount VARCHAR(30),
  infusion_rate_unit VARCHAR(30),
  route VARCHAR(10),
  infusion_complete VARCHAR(1),
  completion_interval VARCHAR(50),
  new_iv_bag_hung VARCHAR(1),
  continued_infusion_in_other_location VARCHAR(1),
  restart_interval VARCHAR(2305),
  side VARCHAR(10),
  site VARCHAR(255),
  non_formulary_visual_verification VARCHAR(1)
);

CREATE TABLE hosp.emar (
  subject_id INTEGER,
  hadm_id INTEGER,
  emar_id VARCHAR(25),
  emar_seq INTEGER,
  poe_id VARCHAR(25),
  pharmacy_id INTEGER,
  enter_provider_id VARCHAR(10),
  charttime TIMESTAMP,
  medication TEXT,
  event_txt VARCHAR(100),
  scheduletime TIMESTAMP,
  storetime TIMESTAMP
);

CREATE TABLE hosp.hcpcsevents (
  subject_id INTEGER,
  hadm_id INTEGER,
  chartdate DATE,
  hcpcs_cd CHAR(5),
  seq_num INTEGER,
  short_description VARCHAR(180)
);

CREATE TABLE hosp.labevents (
  labevent_id INTEGER,
  subject_id INTEGER,
  hadm_id INTEGER,
  specimen_id INTEGER,
  itemid INTEGER,
  order_provider_id VARCHAR(10),
  charttime TIMESTAMP(0),
  storetime TIMESTAMP(0),
  value VARCHAR(200),
  valuenum DOUBLE PRECISION,
  valueuom VARCHAR(20),
  ref_range_lower DOUBLE PRECISION,
  ref_range_upper DOUBLE PRECISION,
  flag VARCHAR(10),
  priority VARCHAR(7),
  comments TEXT
);

CREATE TABLE hosp.microbiologyevents (
  microevent_id INTEGER,
  subject_id INTEGER,
  hadm_id INTEGER,
  micro_specimen_id INTEGER,
  order_provider_id VARCHAR(10),
  chartdate TIMESTAMP(0),
  charttime TIMESTAMP(0),
  spec_itemid INTEGER,
  spec_type_desc VARCHAR(100),
  test_seq INTEGER,
  storedate TIMESTAMP(0),
  storetime TIMESTAMP(0),
  test_itemid INTEGER,
  test_name VARCHAR(100),
  org_itemid INTEGER,
  org_name VARCHAR(100),
  isolate_num SMALLINT,
  quantity VARCHAR(50),
  ab_itemid INTEGER,
  ab_name VARCHAR(30),
  dilution_text VARCHAR(10),
  dilution_comparison VARCHAR(20),
  dilution_value DOUBLE PRECISION,
  interpretation VARCHAR(5),
  comments TEXT
);

CREATE TABLE hosp.omr (
  subject_id INTEGER,
  chartdate DATE,
  seq_num INTEGER,
  result_name VARCHAR(100),
  result_value TEXT
);

CREATE TABLE hosp.patients (
  subject_id INTEGER,
  gender CHAR(1),
  anchor_age SMALLINT,
  anchor_year SMALLINT,
  anchor_year_group VARCHAR(20),
  dod DATE
);

CREATE TABLE hosp.pharmacy (
  subject_id INTEGER,
  hadm_id INTEGER,
  pharmacy_id INTEGER,
  poe_id VARCHAR(25),
  starttime TIMESTAMP(3),
  stoptime TIMESTAMP(3),
  medication TEXT,
  proc_type VARCHAR(50),
  status VARCHAR(50),
  entertime TIMESTAMP(3),
  verifiedtime TIMESTAMP(3),
  route VARCHAR(50),
  frequency VARCHAR(50),
  disp_sched VARCHAR(255),
  infusion_type VARCHAR(15),
  sliding_scale VARCHAR(1),
  lockout_interval VARCHAR(50),
  basal_rate REAL,
  one_hr_max VARCHAR(10),
  doses_per_24_hrs REAL,
  duration REAL,
  duration_interval VARCHAR(50),
  expiration_value INTEGER,
  expiration_unit VARCHAR(50),
  expirationdate TIMESTAMP(3),
  dispensation VARCHAR(50),
  fill_quantity VARCHAR(50)
);

CREATE TABLE hosp.poe (
  poe_id VARCHAR(25),
  poe_seq INTEGER,
  subject_id INTEGER,
  hadm_id INTEGER,
  ordertime TIMESTAMP(0),
  order_type VARCHAR(25),
  order_subtype VARCHAR(50),
  transaction_type VARCHAR(15),
  discontinue_of_poe_id VARCHAR(25),
  discontinued_by_poe_id VARCHAR(25),
  order_provider_id VARCHAR(10),
  order_status VARCHAR(15)
);

CREATE TABLE hosp.poe_detail (
  poe_id VARCHAR(25),
  poe_seq INTEGER,
  subject_id INTEGER,
  field_name VARCHAR(255),
  field_value TEXT
);

CREATE TABLE hosp.prescriptions (
  subject_id INTEGER,
  hadm_id INTEGER,
  pharmacy_id INTEGER,
  poe_id VARCHAR(25),
  poe_seq INTEGER,
  order_provider_id VARCHAR(10),
  starttime TIMESTAMP(3),
  stoptime TIMESTAMP(3),
  drug_type VARCHAR(20),
  drug VARCHAR(255),
  formulary_drug_cd VARCHAR(50),
  gsn VARCHAR(255),
  ndc VARCHAR(25),
  prod_strength VARCHAR(255),
  form_rx VARCHAR(25),
  dose_val_rx VARCHAR(100),
  dose_unit_rx VARCHAR(50),
  form_val_disp VARCHAR(50),
  form_unit_disp VARCHAR(50),
  doses_per_24_hrs REAL,
  route VARCHAR(50)
);

CREATE TABLE hosp.procedures_icd (
  subject_id INTEGER,
  hadm_id INTEGER,
  seq_num INTEGER,
  chartdate DATE,
  icd_code VARCHAR(7),
  icd_version SMALLINT
);

CREATE TABLE hosp.provider (
  provider_id VARCHAR(10)
);

CREATE TABLE hosp.services (
  subject_id INTEGER,
  hadm_id INTEGER,
  transfertime TIMESTAMP,
  prev_service VARCHAR(10),
  curr_service VARCHAR(10)
);

CREATE TABLE hosp.transfers (
  subject_id INTEGER,
  hadm_id INTEGER,
  transfer_id INTEGER,
  eventtype VARCHAR(10),
  careunit VARCHAR(255),
  intime TIMESTAMP,
  outtime TIMESTAMP
);

-- icu module

CREATE TABLE icu.caregiver (
  caregiver_id INTEGER
);

CREATE TABLE icu.chartevents (
  subject_id INTEGER,
  hadm_id INTEGER,
  stay_id INTEGER,
  caregiver_id INTEGER,
  charttime TIMESTAMP,
  storetime TIMESTAMP,
  itemid INTEGER,
  value VARCHAR(200),
  valuenum FLOAT,
  valueuom VARCHAR(20),
  warning SMALLINT
);

CREATE TABLE icu.datetimeevents (
  subject_id INTEGER,
  hadm_id INTEGER,
  stay_id INTEGER,
  caregiver_id INTEGER,
  charttime TIMESTAMP,
  storetime TIMESTAMP,
  itemid INTEGER,
  value TIMESTAMP,
  valueuom VARCHAR(20),
  warning SMALLINT
);

CREATE TABLE icu.d_items (
  itemid INTEGER,
  label VARCHAR(100),
  abbreviation VARCHAR(50),
  linksto VARCHAR(30),
  category VARCHAR(50),
  unitname VARCHAR(50),
  param_type VARCHAR(20),
  lownormalvalue FLOAT,
  highnormalvalue FLOAT
);

CREATE TABLE icu.icustays (
  subject_id INTEGER,
  hadm_id INTEGER,
  stay_id INTEGER,
  first_careunit VARCHAR(255),
  last_careunit VARCHAR(255),
  intime TIMESTAMP,
  outtime TIMESTAMP,
  los FLOAT
);

CREATE TABLE icu.ingredientevents (
  subject_id INTEGER,
  hadm_id INTEGER,
  stay_id INTEGER,
  caregiver_id INTEGER,
  starttime TIMESTAMP,
  endtime TIMESTAMP,
  storetime TIMESTAMP,
  itemid INTEGER,
  amount FLOAT,
  amountuom VARCHAR(20),
  rate FLOAT,
  rateuom VARCHAR(20),
  orderid INTEGER,
  linkorderid INTEGER,
  statusdescription VARCHAR(20),
  originalamount FLOAT,
  originalrate FLOAT
);

CREATE TABLE icu.inputevents (
  subject_id INTEGER,
  hadm_id INTEGER,
  stay_id INTEGER,
  caregiver_id INTEGER,
  starttime TIMESTAMP,
  endtime TIMESTAMP,
  storetime TIMESTAMP,
  itemid INTEGER,
  amount FLOAT,
  amountuom VARCHAR(20),
  rate FLOAT,
  rateuom VARCHAR(20),
  orderid INTEGER,
  linkorderid INTEGER,
  ordercategoryname VARCHAR(50),
  secondaryordercategoryname VARCHAR(50),
  ordercomponenttypedescription VARCHAR(100),
  ordercategorydescription VARCHAR(30),
  patientweight FLOAT,
  totalamount FLOAT,
  totalamountuom VARCHAR(50),
  isopenbag SMALLINT,
  continueinnextdept SMALLINT,
  statusdescription VARCHAR(20),
  originalamount FLOAT,
  originalrate FLOAT
);

CREATE TABLE icu.outputevents (
  subject_id INTEGER,
  hadm_id INTEGER,
  stay_id INTEGER,
  caregiver_id INTEGER,
  charttime TIMESTAMP(3),
  storetime TIMESTAMP(3),
  itemid INTEGER,
  value FLOAT,
  valueuom VARCHAR(20)
);

CREATE TABLE icu.procedureevents (
  subject_id INTEGER,
  hadm_id INTEGER,
  stay_id INTEGER,
  caregiver_id INTEGER,
  starttime TIMESTAMP,
  endtime TIMESTAMP,
  storetime TIMESTAMP,
  itemid INTEGER,
  value FLOAT,
  valueuom VARCHAR(20),
  location VARCHAR(100),
  locationcategory VARCHAR(50),
  orderid INTEGER,
  linkorderid INTEGER,
  ordercategoryname VARCHAR(50),
  ordercategorydescription VARCHAR(30),
  patientweight FLOAT,
  isopenbag SMALLINT,
  continueinnextdept SMALLINT,
  statusdescription VARCHAR(20),
  originalamount FLOAT,
  originalrate FLOAT
);
