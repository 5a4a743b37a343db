package demo

// drugID indexes drugs.
type drugID int

// The medication orders the generator writes.
const (
	drMetformin drugID = iota
	drGlipizide
	drEmpagliflozin
	drInsulinGlargine
	drInsulinLispro
	drInsulinDrip
	drLisinopril
	drAmlodipine
	drLosartan
	drHydrochlorothiazide
	drMetoprololTartrate
	drMetoprololSuccinate
	drCarvedilol
	drFurosemidePO
	drFurosemideIV
	drSpironolactone
	drAtorvastatin
	drAtorvastatinHigh
	drAspirin
	drAspirinLoad
	drClopidogrel
	drTicagrelor
	drNitroglycerin
	drHeparinSC
	drHeparinDrip
	drEnoxaparin
	drApixaban
	drWarfarin
	drDiltiazem
	drVancomycin
	drPipTazo
	drCefepime
	drCeftriaxone
	drAzithromycin
	drMetronidazole
	drCefazolin
	drNitrofurantoin
	drAcetaminophen
	drOndansetron
	drPantoprazole
	drPantoprazoleIV
	drOmeprazole
	drFamotidine
	drLevothyroxine
	drSertraline
	drEscitalopram
	drLorazepam
	drLorazepamIV
	drHaloperidol
	drQuetiapine
	drDocusate
	drSenna
	drPolyethyleneGlycol
	drSalineFlush
	drSodiumChloride
	drLactatedRingers
	drPotassiumChloride
	drMagnesiumSulfate
	drOxycodone
	drHydromorphone
	drPrednisone
	drMethylprednisolone
	drAlbuterol
	drIpratropium
	drTiotropium
	drFluticasoneSalmeterol
	drThiamine
	drFolicAcid
	drMultivitamin
	drNicotinePatch
	drBuprenorphineNaloxone
	drMethadone
	drDonepezil
	drCarbidopaLevodopa
	drLevetiracetam
	drLactulose
	drRifaximin
	drOctreotide
	drBiktarvy
	drAlendronate
	drCalciumCarbonate
	drVitaminD
	drMethotrexate
	drHydroxychloroquine
	drTamsulosin
	drAllopurinol
	drSevelamer
	drNephrocaps
	drEpoetin
	drNorepinephrine
	drDexamethasone
	drRemdesivir
	drFilgrastim
	drAlteplase
	drGabapentin
	numDrugs
)

// drugSpec holds the fixed columns of one kind of prescriptions row.
type drugSpec struct {
	// drug is the name as the pharmacy system shows it (MIMIC-IV keeps
	// tall-man lettering such as "CeftriaXONE").
	drug string
	// drugType is MAIN, BASE (an IV fluid base) or ADDITIVE.
	drugType string
	// formularyCD is the local pharmacy code (invented, MIMIC-like).
	formularyCD string
	// prodStrength describes the product dispensed.
	prodStrength string
	// formRx is the form of the order; empty means NULL.
	formRx string
	// dose and doseUnit are the prescribed dose per administration.
	dose, doseUnit string
	// formVal and formUnit are the amount dispensed per administration.
	formVal, formUnit string
	// perDay is doses_per_24_hrs; 0 means NULL (one-time or weekly).
	perDay float64
	// route is the route of administration.
	route string
	// maxDays, when positive, caps the order's duration (courses of
	// antibiotics, one-time doses use a fraction of a day).
	maxDays float64
}

// drugs lists real drugs with realistic adult doses, units and routes.
var drugs = [numDrugs]drugSpec{
	drMetformin:             {"MetFORMIN (Glucophage)", "MAIN", "METF500", "500mg Tablet", "TABLET", "500", "mg", "1", "TAB", 2, "PO", 0},
	drGlipizide:             {"GlipiZIDE", "MAIN", "GLIP5", "5mg Tablet", "TABLET", "5", "mg", "1", "TAB", 1, "PO", 0},
	drEmpagliflozin:         {"Empagliflozin", "MAIN", "EMPA10", "10 mg Tablet", "TABLET", "10", "mg", "1", "TAB", 1, "PO", 0},
	drInsulinGlargine:       {"Insulin Glargine", "MAIN", "GLAR100I", "100 Units / mL - 10mL Vial", "", "20", "UNIT", "0.2", "mL", 1, "SC", 0},
	drInsulinLispro:         {"Insulin Lispro (sliding scale)", "MAIN", "LISP100I", "100 Units / mL - 10mL Vial", "", "0-10", "UNIT", "0-0.1", "mL", 4, "SC", 0},
	drInsulinDrip:           {"Insulin Regular Human", "MAIN", "INSR100D", "100 Units / 100 mL Bag", "", "5", "UNIT", "5", "mL", 0, "IV DRIP", 2},
	drLisinopril:            {"Lisinopril", "MAIN", "LISI10", "10mg Tablet", "TABLET", "10", "mg", "1", "TAB", 1, "PO", 0},
	drAmlodipine:            {"amLODIPine", "MAIN", "AMLO5", "5mg Tablet", "TABLET", "5", "mg", "1", "TAB", 1, "PO", 0},
	drLosartan:              {"Losartan Potassium", "MAIN", "LOSA50", "50mg Tablet", "TABLET", "50", "mg", "1", "TAB", 1, "PO", 0},
	drHydrochlorothiazide:   {"Hydrochlorothiazide", "MAIN", "HCTZ25", "25mg Tablet", "TABLET", "25", "mg", "1", "TAB", 1, "PO", 0},
	drMetoprololTartrate:    {"Metoprolol Tartrate", "MAIN", "METO25", "25mg Tablet", "TABLET", "25", "mg", "1", "TAB", 2, "PO", 0},
	drMetoprololSuccinate:   {"Metoprolol Succinate XL", "MAIN", "METS50", "50mg Tablet ER", "TABLET", "50", "mg", "1", "TAB", 1, "PO", 0},
	drCarvedilol:            {"Carvedilol", "MAIN", "CARV625", "6.25mg Tablet", "TABLET", "6.25", "mg", "1", "TAB", 2, "PO", 0},
	drFurosemidePO:          {"Furosemide", "MAIN", "FURO40", "40mg Tablet", "TABLET", "40", "mg", "1", "TAB", 1, "PO", 0},
	drFurosemideIV:          {"Furosemide", "MAIN", "FURO40I", "10mg/mL-4mL Vial", "", "40", "mg", "4", "mL", 2, "IV", 4},
	drSpironolactone:        {"Spironolactone", "MAIN", "SPIR25", "25mg Tablet", "TABLET", "25", "mg", "1", "TAB", 1, "PO", 0},
	drAtorvastatin:          {"Atorvastatin", "MAIN", "ATOR40", "40mg Tablet", "TABLET", "40", "mg", "1", "TAB", 1, "PO", 0},
	drAtorvastatinHigh:      {"Atorvastatin", "MAIN", "ATOR80", "80mg Tablet", "TABLET", "80", "mg", "1", "TAB", 1, "PO", 0},
	drAspirin:               {"Aspirin", "MAIN", "ASA81", "81mg Chewable Tablet", "TABLET", "81", "mg", "1", "TAB", 1, "PO", 0},
	drAspirinLoad:           {"Aspirin", "MAIN", "ASA325", "325mg Tablet", "TABLET", "325", "mg", "1", "TAB", 0, "PO", 0.05},
	drClopidogrel:           {"Clopidogrel", "MAIN", "CLOP75", "75mg Tablet", "TABLET", "75", "mg", "1", "TAB", 1, "PO", 0},
	drTicagrelor:            {"Ticagrelor", "MAIN", "TICA90", "90mg Tablet", "TABLET", "90", "mg", "1", "TAB", 2, "PO", 0},
	drNitroglycerin:         {"Nitroglycerin SL", "MAIN", "NTG4SL", "0.4mg SL Tablet", "TABLET", "0.4", "mg", "1", "TAB", 0, "SL", 1},
	drHeparinSC:             {"Heparin", "MAIN", "HEPA5I", "5000 Units / mL- 1mL Vial", "", "5000", "UNIT", "1", "mL", 3, "SC", 0},
	drHeparinDrip:           {"Heparin", "BASE", "HEPBASE", "25,000 unit / 500 mL Premix Bag", "", "1000", "UNIT", "20", "mL", 0, "IV", 3},
	drEnoxaparin:            {"Enoxaparin Sodium", "MAIN", "ENOX40I", "40mg / 0.4mL Syringe", "", "40", "mg", "0.4", "mL", 1, "SC", 0},
	drApixaban:              {"Apixaban", "MAIN", "APIX5", "5 mg Tablet", "TABLET", "5", "mg", "1", "TAB", 2, "PO", 0},
	drWarfarin:              {"Warfarin", "MAIN", "WARF5", "5mg Tablet", "TABLET", "5", "mg", "1", "TAB", 1, "PO", 0},
	drDiltiazem:             {"Diltiazem", "MAIN", "DILT30", "30mg Tablet", "TABLET", "30", "mg", "1", "TAB", 4, "PO", 0},
	drVancomycin:            {"Vancomycin", "MAIN", "VANC1F", "1g Frozen Bag", "", "1000", "mg", "200", "mL", 2, "IV", 7},
	drPipTazo:               {"Piperacillin-Tazobactam", "MAIN", "PIPT4.5F", "4.5 g Frozen Bag", "", "4.5", "g", "1", "BAG", 3, "IV", 7},
	drCefepime:              {"Cefepime", "MAIN", "CEFE2F", "2 g Frozen Bag", "", "2", "g", "1", "BAG", 2, "IV", 7},
	drCeftriaxone:           {"CeftriaXONE", "MAIN", "CEFT1F", "1g Frozen Bag", "", "1", "g", "1", "BAG", 1, "IV", 5},
	drAzithromycin:          {"Azithromycin", "MAIN", "AZIT500", "500 mg Tablet", "TABLET", "500", "mg", "2", "TAB", 1, "PO", 3},
	drMetronidazole:         {"MetroNIDAZOLE (FLagyl)", "MAIN", "METR500I", "500mg/100mL Premix Bag", "", "500", "mg", "100", "mL", 3, "IV", 7},
	drCefazolin:             {"CeFAZolin", "MAIN", "CEFA2F", "2 g Frozen Bag", "", "2", "g", "1", "BAG", 3, "IV", 2},
	drNitrofurantoin:        {"Nitrofurantoin Monohyd (MacroBID)", "MAIN", "NITR100", "100mg Capsule", "CAPSULE", "100", "mg", "1", "CAP", 2, "PO", 5},
	drAcetaminophen:         {"Acetaminophen", "MAIN", "ACET325", "325mg Tablet", "TABLET", "650", "mg", "2", "TAB", 4, "PO/NG", 0},
	drOndansetron:           {"Ondansetron", "MAIN", "ONDA4I", "2mg/mL-2mL Vial", "", "4", "mg", "2", "mL", 3, "IV", 0},
	drPantoprazole:          {"Pantoprazole", "MAIN", "PANT40", "40mg Tablet", "TABLET", "40", "mg", "1", "TAB", 1, "PO", 0},
	drPantoprazoleIV:        {"Pantoprazole", "MAIN", "PANT40I", "40mg Vial", "", "40", "mg", "1", "VIAL", 2, "IV", 3},
	drOmeprazole:            {"Omeprazole", "MAIN", "OMEP20", "20mg Capsule DR", "CAPSULE", "20", "mg", "1", "CAP", 1, "PO", 0},
	drFamotidine:            {"Famotidine", "MAIN", "FAMO20", "20mg Tablet", "TABLET", "20", "mg", "1", "TAB", 2, "PO", 0},
	drLevothyroxine:         {"Levothyroxine Sodium", "MAIN", "LEVO75", "75mcg Tablet", "TABLET", "75", "mcg", "1", "TAB", 1, "PO", 0},
	drSertraline:            {"Sertraline", "MAIN", "SERT50", "50mg Tablet", "TABLET", "50", "mg", "1", "TAB", 1, "PO", 0},
	drEscitalopram:          {"Escitalopram Oxalate", "MAIN", "ESCI10", "10mg Tablet", "TABLET", "10", "mg", "1", "TAB", 1, "PO", 0},
	drLorazepam:             {"Lorazepam", "MAIN", "LORA05", "0.5mg Tablet", "TABLET", "0.5", "mg", "1", "TAB", 2, "PO", 0},
	drLorazepamIV:           {"Lorazepam", "MAIN", "LORA2I", "2mg/mL Vial", "", "1", "mg", "0.5", "mL", 4, "IV", 3},
	drHaloperidol:           {"Haloperidol", "MAIN", "HALO5I", "5mg/mL Ampule", "", "2", "mg", "0.4", "mL", 2, "IV", 3},
	drQuetiapine:            {"QUEtiapine Fumarate", "MAIN", "QUET25", "25mg Tablet", "TABLET", "25", "mg", "1", "TAB", 1, "PO", 0},
	drDocusate:              {"Docusate Sodium", "MAIN", "DOCU100", "100mg Capsule", "CAPSULE", "100", "mg", "1", "CAP", 2, "PO", 0},
	drSenna:                 {"Senna", "MAIN", "SENN187", "8.6 mg Tablet", "TABLET", "8.6", "mg", "1", "TAB", 2, "PO", 0},
	drPolyethyleneGlycol:    {"Polyethylene Glycol", "MAIN", "PEG17", "17g Powder Packet", "", "17", "g", "1", "PKT", 1, "PO", 0},
	drSalineFlush:           {"Sodium Chloride 0.9%  Flush", "MAIN", "NACLFLUSH", "10 mL Syringe", "", "3", "mL", "0.3", "SYR", 3, "IV", 0},
	drSodiumChloride:        {"Sodium Chloride 0.9%", "BASE", "NS1000", "1000mL Bag", "", "1000", "mL", "1000", "mL", 0, "IV", 1},
	drLactatedRingers:       {"Lactated Ringers", "BASE", "LR1000", "1000mL Bag", "", "1000", "mL", "1000", "mL", 0, "IV", 1},
	drPotassiumChloride:     {"Potassium Chloride", "MAIN", "KCL20", "20mEq Tablet ER", "TABLET", "40", "mEq", "2", "TAB", 0, "PO", 0.1},
	drMagnesiumSulfate:      {"Magnesium Sulfate", "MAIN", "MAG2PM", "2 g / 50 mL Premix Bag", "", "2", "gm", "50", "mL", 0, "IV", 0.1},
	drOxycodone:             {"OxyCODONE (Immediate Release)", "MAIN", "OXYC5", "5mg Tablet", "TABLET", "5", "mg", "1", "TAB", 6, "PO", 0},
	drHydromorphone:         {"HYDROmorphone (Dilaudid)", "MAIN", "HYDR1I", "1mg/mL Syringe", "", "0.5", "mg", "0.5", "mL", 6, "IV", 3},
	drPrednisone:            {"PredniSONE", "MAIN", "PRED20", "20 mg Tablet", "TABLET", "40", "mg", "2", "TAB", 1, "PO", 5},
	drMethylprednisolone:    {"MethylPREDNISolone Sodium Succ", "MAIN", "METH125I", "125mg Vial", "", "125", "mg", "1", "VIAL", 0, "IV", 0.1},
	drAlbuterol:             {"Albuterol 0.083% Neb Soln", "MAIN", "ALBU3H", "2.5mg/3mL Neb", "", "1", "NEB", "1", "NEB", 6, "IH", 0},
	drIpratropium:           {"Ipratropium Bromide Neb", "MAIN", "IPRA2H", "0.02% 2.5 mL Neb", "", "1", "NEB", "1", "NEB", 4, "IH", 0},
	drTiotropium:            {"Tiotropium Bromide", "MAIN", "TIOT18", "18 mcg Cap for Inhalation", "CAPSULE", "1", "CAP", "1", "CAP", 1, "IH", 0},
	drFluticasoneSalmeterol: {"Fluticasone-Salmeterol Diskus (250/50)", "MAIN", "ADVA250", "1 Diskus", "", "1", "INH", "1", "INH", 2, "IH", 0},
	drThiamine:              {"Thiamine", "MAIN", "THIA100", "100mg Tablet", "TABLET", "100", "mg", "1", "TAB", 1, "PO", 0},
	drFolicAcid:             {"FoLIC Acid", "MAIN", "FOLI1", "1 mg Tab", "TABLET", "1", "mg", "1", "TAB", 1, "PO", 0},
	drMultivitamin:          {"Multivitamins", "MAIN", "MULT1", "1 Tablet", "TABLET", "1", "TAB", "1", "TAB", 1, "PO", 0},
	drNicotinePatch:         {"Nicotine Patch", "MAIN", "NICO14T", "14 mg/24 hr Patch", "", "14", "mg", "1", "PTCH", 1, "TD", 0},
	drBuprenorphineNaloxone: {"Buprenorphine-Naloxone (8mg-2mg)", "MAIN", "BUPR8/2", "8mg-2mg SL Tab", "TABLET", "1", "TAB", "1", "TAB", 1, "SL", 0},
	drMethadone:             {"Methadone", "MAIN", "METD10", "10mg Tablet", "TABLET", "60", "mg", "6", "TAB", 1, "PO", 0},
	drDonepezil:             {"Donepezil", "MAIN", "DONE10", "10mg Tablet", "TABLET", "10", "mg", "1", "TAB", 1, "PO", 0},
	drCarbidopaLevodopa:     {"Carbidopa-Levodopa (25-100)", "MAIN", "CARB25/100", "1 Tablet", "TABLET", "1", "TAB", "1", "TAB", 3, "PO", 0},
	drLevetiracetam:         {"LevETIRAcetam", "MAIN", "LEVE500", "500mg Tablet", "TABLET", "500", "mg", "1", "TAB", 2, "PO/NG", 0},
	drLactulose:             {"Lactulose", "MAIN", "LACT30L", "30 mL Unit Dose Cup", "", "30", "mL", "30", "mL", 3, "PO", 0},
	drRifaximin:             {"Rifaximin", "MAIN", "RIFA550", "550 mg Tablet", "TABLET", "550", "mg", "1", "TAB", 2, "PO", 0},
	drOctreotide:            {"Octreotide Acetate", "MAIN", "OCTR50I", "50mcg/mL Vial", "", "50", "mcg", "1", "mL", 0, "IV DRIP", 3},
	drBiktarvy:              {"Bictegravir-Emtricitab-Tenofov", "MAIN", "BIKT", "50-200-25 mg Tablet", "TABLET", "1", "TAB", "1", "TAB", 1, "PO", 0},
	drAlendronate:           {"Alendronate Sodium", "MAIN", "ALEN70", "70mg Tablet", "TABLET", "70", "mg", "1", "TAB", 0, "PO", 0},
	drCalciumCarbonate:      {"Calcium Carbonate", "MAIN", "CALC500", "500mg Tablet", "TABLET", "500", "mg", "1", "TAB", 2, "PO", 0},
	drVitaminD:              {"Vitamin D3", "MAIN", "VITD1000", "1000 UNIT Tablet", "TABLET", "1000", "UNIT", "1", "TAB", 1, "PO", 0},
	drMethotrexate:          {"Methotrexate", "MAIN", "METX2.5", "2.5mg Tablet", "TABLET", "15", "mg", "6", "TAB", 0, "PO", 0},
	drHydroxychloroquine:    {"Hydroxychloroquine Sulfate", "MAIN", "HYDX200", "200mg Tablet", "TABLET", "200", "mg", "1", "TAB", 2, "PO", 0},
	drTamsulosin:            {"Tamsulosin", "MAIN", "TAMS4", "0.4 mg Capsule", "CAPSULE", "0.4", "mg", "1", "CAP", 1, "PO", 0},
	drAllopurinol:           {"Allopurinol", "MAIN", "ALLO100", "100mg Tablet", "TABLET", "100", "mg", "1", "TAB", 1, "PO", 0},
	drSevelamer:             {"Sevelamer CARBONATE", "MAIN", "SEVE800", "800 mg Tablet", "TABLET", "800", "mg", "1", "TAB", 3, "PO", 0},
	drNephrocaps:            {"Nephrocaps", "MAIN", "NEPH1", "1 Capsule", "CAPSULE", "1", "CAP", "1", "CAP", 1, "PO", 0},
	drEpoetin:               {"Epoetin Alfa", "MAIN", "EPOE4I", "4000 Units / mL Vial", "", "4000", "UNIT", "1", "mL", 0, "SC", 0},
	drNorepinephrine:        {"Norepinephrine", "MAIN", "NORE4I", "4 mg / 250 mL Premix Bag", "", "0.06", "mcg/kg/min", "0.06", "mcg/kg/min", 0, "IV DRIP", 3},
	drDexamethasone:         {"Dexamethasone", "MAIN", "DEXA6", "6 mg Tablet", "TABLET", "6", "mg", "1", "TAB", 1, "PO/NG", 10},
	drRemdesivir:            {"Remdesivir", "MAIN", "REMD100I", "100 mg Vial", "", "100", "mg", "1", "VIAL", 1, "IV", 5},
	drFilgrastim:            {"Filgrastim", "MAIN", "FILG480I", "480 mcg / 0.8 mL Syringe", "", "480", "mcg", "0.8", "mL", 1, "SC", 5},
	drAlteplase:             {"Alteplase (Stroke)", "MAIN", "ALTE100I", "100 mg Vial", "", "70", "mg", "70", "mL", 0, "IV", 0.05},
	drGabapentin:            {"Gabapentin", "MAIN", "GABA300", "300mg Capsule", "CAPSULE", "300", "mg", "1", "CAP", 3, "PO", 0},
}
