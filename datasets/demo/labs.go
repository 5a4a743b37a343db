package demo

// labID indexes labItems.
type labID int

// The laboratory tests the generator draws, in d_labitems order.
const (
	labSodium labID = iota
	labPotassium
	labChloride
	labBicarbonate
	labUreaNitrogen
	labCreatinine
	labGlucose
	labAnionGap
	labCalcium
	labMagnesium
	labPhosphate
	labLactate
	labAlbumin
	labBilirubin
	labALT
	labAST
	labAlkPhos
	labProtein
	labHbA1c
	labCholesterol
	labHDL
	labLDL
	labTriglycerides
	labCKMB
	labCK
	labTroponinT
	labNTproBNP
	labCRP
	labLipase
	labTSH
	labLDH
	labFerritin
	labHemoglobin
	labHematocrit
	labWBC
	labPlatelets
	labRBC
	labMCV
	labMCH
	labMCHC
	labRDW
	labNeutrophils
	labLymphocytes
	labINR
	labPT
	labPTT
	labFibrinogen
	labPH
	labPO2
	labPCO2
	labUrinePH
	labUrineSG
	labUrineWBC
	numLabs
)

// labItem is one row of d_labitems plus what the generator needs to emit a
// result: its unit, reference range and precision.
type labItem struct {
	// itemid, label, fluid and category are MIMIC-IV v2.2 d_labitems values.
	itemid   int
	label    string
	fluid    string
	category string
	// unit is valueuom; empty for unitless results.
	unit string
	// lo and hi bound the reference range (for male patients when loF/hiF
	// are set); hi 0 means no upper limit.
	lo, hi float64
	// loF and hiF are the female reference range; zero when the same.
	loF, hiF float64
	// decimals is the number of decimals of value.
	decimals int
}

// labItems lists real MIMIC-IV itemids and labels with typical units and
// reference ranges of the MIMIC-IV hospital laboratory.
var labItems = [numLabs]labItem{
	labSodium:        {50983, "Sodium", "Blood", "Chemistry", "mEq/L", 133, 145, 0, 0, 0},
	labPotassium:     {50971, "Potassium", "Blood", "Chemistry", "mEq/L", 3.3, 5.1, 0, 0, 1},
	labChloride:      {50902, "Chloride", "Blood", "Chemistry", "mEq/L", 96, 108, 0, 0, 0},
	labBicarbonate:   {50882, "Bicarbonate", "Blood", "Chemistry", "mEq/L", 22, 32, 0, 0, 0},
	labUreaNitrogen:  {51006, "Urea Nitrogen", "Blood", "Chemistry", "mg/dL", 6, 20, 0, 0, 0},
	labCreatinine:    {50912, "Creatinine", "Blood", "Chemistry", "mg/dL", 0.5, 1.2, 0.4, 1.1, 1},
	labGlucose:       {50931, "Glucose", "Blood", "Chemistry", "mg/dL", 70, 100, 0, 0, 0},
	labAnionGap:      {50868, "Anion Gap", "Blood", "Chemistry", "mEq/L", 8, 20, 0, 0, 0},
	labCalcium:       {50893, "Calcium, Total", "Blood", "Chemistry", "mg/dL", 8.4, 10.3, 0, 0, 1},
	labMagnesium:     {50960, "Magnesium", "Blood", "Chemistry", "mg/dL", 1.6, 2.6, 0, 0, 1},
	labPhosphate:     {50970, "Phosphate", "Blood", "Chemistry", "mg/dL", 2.7, 4.5, 0, 0, 1},
	labLactate:       {50813, "Lactate", "Blood", "Blood Gas", "mmol/L", 0.5, 2, 0, 0, 1},
	labAlbumin:       {50862, "Albumin", "Blood", "Chemistry", "g/dL", 3.5, 5.2, 0, 0, 1},
	labBilirubin:     {50885, "Bilirubin, Total", "Blood", "Chemistry", "mg/dL", 0, 1.5, 0, 0, 1},
	labALT:           {50861, "Alanine Aminotransferase (ALT)", "Blood", "Chemistry", "IU/L", 0, 40, 0, 0, 0},
	labAST:           {50878, "Asparate Aminotransferase (AST)", "Blood", "Chemistry", "IU/L", 0, 40, 0, 0, 0},
	labAlkPhos:       {50863, "Alkaline Phosphatase", "Blood", "Chemistry", "IU/L", 35, 105, 0, 0, 0},
	labProtein:       {50976, "Protein, Total", "Blood", "Chemistry", "g/dL", 6.4, 8.3, 0, 0, 1},
	labHbA1c:         {50852, "% Hemoglobin A1c", "Blood", "Chemistry", "%", 4, 6, 0, 0, 1},
	labCholesterol:   {50907, "Cholesterol, Total", "Blood", "Chemistry", "mg/dL", 0, 199, 0, 0, 0},
	labHDL:           {50904, "Cholesterol, HDL", "Blood", "Chemistry", "mg/dL", 40, 0, 0, 0, 0},
	labLDL:           {50905, "Cholesterol, LDL, Calculated", "Blood", "Chemistry", "mg/dL", 0, 129, 0, 0, 0},
	labTriglycerides: {51000, "Triglycerides", "Blood", "Chemistry", "mg/dL", 0, 149, 0, 0, 0},
	labCKMB:          {50911, "Creatine Kinase, MB Isoenzyme", "Blood", "Chemistry", "ng/mL", 0, 10, 0, 0, 0},
	labCK:            {50910, "Creatine Kinase (CK)", "Blood", "Chemistry", "IU/L", 39, 308, 0, 0, 0},
	labTroponinT:     {51003, "Troponin T", "Blood", "Chemistry", "ng/mL", 0, 0.01, 0, 0, 2},
	labNTproBNP:      {50963, "NTproBNP", "Blood", "Chemistry", "pg/mL", 0, 353, 0, 0, 0},
	labCRP:           {50889, "C-Reactive Protein", "Blood", "Chemistry", "mg/L", 0, 5, 0, 0, 1},
	labLipase:        {50956, "Lipase", "Blood", "Chemistry", "IU/L", 0, 60, 0, 0, 0},
	labTSH:           {50993, "Thyroid Stimulating Hormone", "Blood", "Chemistry", "uIU/mL", 0.27, 4.2, 0, 0, 2},
	labLDH:           {50954, "Lactate Dehydrogenase (LD)", "Blood", "Chemistry", "IU/L", 94, 250, 0, 0, 0},
	labFerritin:      {50924, "Ferritin", "Blood", "Chemistry", "ng/mL", 30, 400, 13, 150, 0},
	labHemoglobin:    {51222, "Hemoglobin", "Blood", "Hematology", "g/dL", 13.7, 17.5, 11.2, 15.7, 1},
	labHematocrit:    {51221, "Hematocrit", "Blood", "Hematology", "%", 40, 51, 34, 45, 1},
	labWBC:           {51301, "White Blood Cells", "Blood", "Hematology", "K/uL", 4, 10, 0, 0, 1},
	labPlatelets:     {51265, "Platelet Count", "Blood", "Hematology", "K/uL", 150, 400, 0, 0, 0},
	labRBC:           {51279, "Red Blood Cells", "Blood", "Hematology", "m/uL", 4.6, 6.1, 3.9, 5.2, 2},
	labMCV:           {51250, "MCV", "Blood", "Hematology", "fL", 82, 98, 0, 0, 0},
	labMCH:           {51248, "MCH", "Blood", "Hematology", "pg", 26, 32, 0, 0, 1},
	labMCHC:          {51249, "MCHC", "Blood", "Hematology", "g/dL", 31, 37, 0, 0, 1},
	labRDW:           {51277, "RDW", "Blood", "Hematology", "%", 10.5, 15.5, 0, 0, 1},
	labNeutrophils:   {51256, "Neutrophils", "Blood", "Hematology", "%", 34, 71, 0, 0, 1},
	labLymphocytes:   {51244, "Lymphocytes", "Blood", "Hematology", "%", 18, 42, 0, 0, 1},
	labINR:           {51237, "INR(PT)", "Blood", "Hematology", "", 0.9, 1.1, 0, 0, 1},
	labPT:            {51274, "PT", "Blood", "Hematology", "sec", 9.4, 12.5, 0, 0, 1},
	labPTT:           {51275, "PTT", "Blood", "Hematology", "sec", 25, 36.5, 0, 0, 1},
	labFibrinogen:    {51214, "Fibrinogen, Functional", "Blood", "Hematology", "mg/dL", 180, 400, 0, 0, 0},
	labPH:            {50820, "pH", "Blood", "Blood Gas", "units", 7.35, 7.45, 0, 0, 2},
	labPO2:           {50821, "pO2", "Blood", "Blood Gas", "mm Hg", 85, 105, 0, 0, 0},
	labPCO2:          {50818, "pCO2", "Blood", "Blood Gas", "mm Hg", 35, 45, 0, 0, 0},
	labUrinePH:       {51491, "pH", "Urine", "Hematology", "units", 5, 8, 0, 0, 1},
	labUrineSG:       {51498, "Specific Gravity", "Urine", "Hematology", "", 1.001, 1.035, 0, 0, 3},
	labUrineWBC:      {51516, "WBC", "Urine", "Hematology", "#/hpf", 0, 5, 0, 0, 0},
}

// Panels are the groups of tests drawn on one specimen.
var (
	panelBMP     = []labID{labSodium, labPotassium, labChloride, labBicarbonate, labUreaNitrogen, labCreatinine, labGlucose, labAnionGap, labCalcium}
	panelMgPhos  = []labID{labMagnesium, labPhosphate}
	panelCBC     = []labID{labWBC, labHemoglobin, labHematocrit, labPlatelets, labRBC, labMCV, labMCH, labMCHC, labRDW}
	panelCBCLite = []labID{labWBC, labHemoglobin, labHematocrit, labPlatelets}
	panelDiff    = []labID{labNeutrophils, labLymphocytes}
	panelLFT     = []labID{labALT, labAST, labAlkPhos, labBilirubin, labAlbumin, labProtein}
	panelCoag    = []labID{labPT, labINR, labPTT}
	panelCardiac = []labID{labTroponinT, labCKMB, labCK}
	panelLipids  = []labID{labCholesterol, labHDL, labLDL, labTriglycerides}
	panelGas     = []labID{labPH, labPO2, labPCO2, labLactate}
	panelUrine   = []labID{labUrinePH, labUrineSG, labUrineWBC}
)
