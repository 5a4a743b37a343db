package demo

import "sync"

// sopClass returns the SOP Class UID of a modality's storage class (DICOM
// PS3.6), or "" for an unknown modality.
func sopClass(modality string) string {
	switch modality {
	case "CT":
		return "1.2.840.10008.5.1.4.1.1.2"
	case "MR":
		return "1.2.840.10008.5.1.4.1.1.4"
	case "PT":
		return "1.2.840.10008.5.1.4.1.1.128"
	case "CR":
		return "1.2.840.10008.5.1.4.1.1.1"
	case "DX":
		return "1.2.840.10008.5.1.4.1.1.1.1"
	case "MG":
		return "1.2.840.10008.5.1.4.1.1.1.2"
	case "US":
		return "1.2.840.10008.5.1.4.1.1.6.1"
	case "SM":
		return "1.2.840.10008.5.1.4.1.1.77.1.6"
	case "SEG":
		return "1.2.840.10008.5.1.4.1.1.66.4"
	case "RTSTRUCT":
		return "1.2.840.10008.5.1.4.1.1.481.3"
	}
	return ""
}

// Transfer syntax UIDs (DICOM PS3.6).
const (
	tsImplicitLE = "1.2.840.10008.1.2"
	tsExplicitLE = "1.2.840.10008.1.2.1"
	tsExplicitBE = "1.2.840.10008.1.2.2"
	tsJPEG       = "1.2.840.10008.1.2.4.50"
	tsJPEG2000LL = "1.2.840.10008.1.2.4.90"
)

// uidRoot is the UID root under which the demo's UIDs are made up.
const uidRoot = "1.2.826.0.1.3680043.8.498."

// seriesSpec describes one kind of series of a study.
type seriesSpec struct {
	modality string
	desc     string
	// seq is the MR SequenceName written by SIEMENS, GE and Philips
	// scanners respectively; empty for other modalities.
	seq [3]string
	// prob is the chance the series is part of a study.
	prob float64
	// count bounds the number of instances.
	count [2]int
	// thick lists SliceThickness choices in mm; nil means NULL.
	thick []float64
	// dims lists Rows x Columns choices; nil copies the study's previous
	// image series (for SEG and RTSTRUCT).
	dims [][2]int
	// spacing bounds PixelSpacing in mm; zero means NULL.
	spacing [2]float64
}

// studySpec describes one kind of study of a collection.
type studySpec struct {
	desc     string
	bodyPart string
	weight   float64
	series   []seriesSpec
}

// scannerSpec is a device that produces one modality.
type scannerSpec struct {
	modality     string
	manufacturer string
	model        string
}

// siteSpec is a (made-up) contributing institution.
type siteSpec struct {
	name    string
	address string
	weight  float64
}

// collectionSpec describes one imaging collection, shaped after the public
// IDC/TCIA collection of the same id.
type collectionSpec struct {
	id         string
	cancerType string
	// patients is the number of patients at DefaultPatients; it scales.
	patients int
	// idPattern formats PatientID from a number, or from a TCGA tissue
	// source site code and a number when tss is set.
	idPattern string
	tss       []string
	// male is the share of male patients.
	male float64
	// Age at the first study: normal(ageMean, ageSD) within [ageMin,
	// ageMax]; a share ageYoung is drawn uniformly from 13 to 30; a share
	// ageMissing has no PatientAge, as in collections that removed it.
	ageMean, ageSD float64
	ageMin, ageMax int
	ageYoung       float64
	ageMissing     float64
	// years bounds the first StudyDate.
	years [2]int
	// studies bounds the number of studies per patient; sameDay puts them
	// on the same date (test-retest collections), else they follow yearly.
	studies [2]int
	sameDay bool
	// oldScanners lets some series use the retired big-endian syntax.
	oldScanners bool
	studyTypes  []studySpec
	scanners    []scannerSpec
	sites       []siteSpec
}

// MR sequence families, as SequenceName by SIEMENS, GE and Philips.
var (
	seqT1SE    = [3]string{"*se2d1", "se2d", "SE"}
	seqT13D    = [3]string{"*tfl3d1_16ns", "efgre3d", "T1TFE"}
	seqT1GRE3D = [3]string{"*fl3d1", "efgre3d", "T1FFE"}
	seqT2TSE   = [3]string{"*tse2d1_15", "fse-xl", "T2TSE"}
	seqFLAIR   = [3]string{"*tir2d1_21", "fse-ir", "IR"}
	seqDWI     = [3]string{"ep_b0_1000", "epi2", "DwiSE"}
	seqDWIPro  = [3]string{"ep_b50t", "epi2", "DwiSE"}
	seqADC     = [3]string{"ep_b50_800", "epi2", "DwiSE"}
	seqDSC     = [3]string{"*epfid2d1_128", "epi", "FEEPI"}
	seqHASTE   = [3]string{"*haste2d1", "ssfse", "T2SSh"}
	seqPD3D    = [3]string{"*tfl3d1", "fgre3d", "T1FFE"}
)

// Common series shapes.
var (
	ctChestThin = seriesSpec{"CT", "LUNG 2.5MM", [3]string{}, 1, [2]int{90, 125}, []float64{2.5, 2}, [][2]int{{512, 512}}, [2]float64{0.55, 0.82}}
	ctChest     = seriesSpec{"CT", "CHEST 2.5MM", [3]string{}, 1, [2]int{60, 100}, []float64{2.5, 2}, [][2]int{{512, 512}}, [2]float64{0.55, 0.8}}
	ctAbdomen   = seriesSpec{"CT", "AX 5MM PORTAL VENOUS", [3]string{}, 1, [2]int{50, 90}, []float64{5, 3}, [][2]int{{512, 512}}, [2]float64{0.65, 0.9}}
	ctArterial  = seriesSpec{"CT", "AX 2.5MM ARTERIAL", [3]string{}, 0.4, [2]int{60, 100}, []float64{2.5}, [][2]int{{512, 512}}, [2]float64{0.65, 0.9}}
	ctHead      = seriesSpec{"CT", "AXIAL 5MM BRAIN", [3]string{}, 1, [2]int{25, 35}, []float64{5}, [][2]int{{512, 512}}, [2]float64{0.43, 0.49}}
	ctAC        = seriesSpec{"CT", "CT ATTENUATION CORRECTION", [3]string{}, 1, [2]int{60, 100}, []float64{3.75, 5}, [][2]int{{512, 512}}, [2]float64{0.98, 1.37}}
	ptWB        = seriesSpec{"PT", "PET WB AC", [3]string{}, 1, [2]int{60, 100}, []float64{3.27, 4}, [][2]int{{128, 128}, {192, 192}, {256, 256}}, [2]float64{2.7, 5.47}}
	segAny      = seriesSpec{"SEG", "Segmentation", [3]string{}, 1, [2]int{1, 1}, nil, nil, [2]float64{}}
	slide       = seriesSpec{"SM", "Slide microscopy, H&E", [3]string{}, 1, [2]int{2, 4}, nil, [][2]int{{256, 256}, {240, 240}, {512, 512}}, [2]float64{0.00024, 0.0005}}
)

// mgView is one full-field digital mammography view.
func mgView(desc string) seriesSpec {
	return seriesSpec{"MG", desc, [3]string{}, 0.95, [2]int{1, 1}, nil, [][2]int{{4096, 3328}, {3328, 2560}}, [2]float64{0.065, 0.1}}
}

// mrBrain2D is a 2D brain MR series with 4-5 mm slices.
func mrBrain2D(desc string, seq [3]string, prob float64) seriesSpec {
	return seriesSpec{"MR", desc, seq, prob, [2]int{18, 24}, []float64{5, 4}, [][2]int{{256, 256}, {512, 512}}, [2]float64{0.43, 0.94}}
}

// mrBrain3D is a 3D brain MR series (thinned out to keep the demo small).
func mrBrain3D(desc string, seq [3]string, prob float64) seriesSpec {
	return seriesSpec{"MR", desc, seq, prob, [2]int{26, 34}, []float64{1, 1.2}, [][2]int{{256, 256}}, [2]float64{0.94, 1}}
}

// mrBreast is a breast MR series.
func mrBreast(desc string, seq [3]string, prob float64) seriesSpec {
	return seriesSpec{"MR", desc, seq, prob, [2]int{30, 44}, []float64{2, 3}, [][2]int{{512, 512}, {384, 384}}, [2]float64{0.66, 0.9}}
}

// mrBody is an abdominal or pelvic MR series.
func mrBody(desc string, seq [3]string, prob float64) seriesSpec {
	return seriesSpec{"MR", desc, seq, prob, [2]int{20, 36}, []float64{3, 5, 6}, [][2]int{{256, 256}, {320, 320}}, [2]float64{1.1, 1.5}}
}

// mrProstate is a prostate MR series.
func mrProstate(desc string, seq [3]string, prob float64) seriesSpec {
	return seriesSpec{"MR", desc, seq, prob, [2]int{19, 27}, []float64{3, 3.6}, [][2]int{{320, 320}, {384, 384}, {128, 128}}, [2]float64{0.5, 2}}
}

// Scanners by modality, with real manufacturer and model names.
var (
	ctOld = []scannerSpec{
		{"CT", "GE MEDICAL SYSTEMS", "LightSpeed QX/i"}, {"CT", "GE MEDICAL SYSTEMS", "LightSpeed Ultra"},
		{"CT", "GE MEDICAL SYSTEMS", "LightSpeed16"}, {"CT", "SIEMENS", "Sensation 16"},
		{"CT", "SIEMENS", "Volume Zoom"}, {"CT", "Philips", "Mx8000"}, {"CT", "TOSHIBA", "Aquilion"},
	}
	ctNew = []scannerSpec{
		{"CT", "GE MEDICAL SYSTEMS", "LightSpeed VCT"}, {"CT", "GE MEDICAL SYSTEMS", "Discovery CT750 HD"},
		{"CT", "SIEMENS", "SOMATOM Definition AS+"}, {"CT", "SIEMENS", "SOMATOM Definition Flash"},
		{"CT", "SIEMENS", "Sensation 64"}, {"CT", "Philips", "Brilliance 64"}, {"CT", "TOSHIBA", "Aquilion ONE"},
	}
	petCT = []scannerSpec{
		{"PT", "GE MEDICAL SYSTEMS", "Discovery ST"}, {"PT", "GE MEDICAL SYSTEMS", "Discovery 690"},
		{"PT", "SIEMENS", "Biograph64"}, {"CT", "GE MEDICAL SYSTEMS", "Discovery ST"},
		{"CT", "GE MEDICAL SYSTEMS", "Discovery 690"}, {"CT", "SIEMENS", "Biograph64"},
	}
	mrOld = []scannerSpec{
		{"MR", "GE MEDICAL SYSTEMS", "GENESIS_SIGNA"}, {"MR", "GE MEDICAL SYSTEMS", "SIGNA EXCITE"},
		{"MR", "SIEMENS", "Symphony"}, {"MR", "SIEMENS", "Avanto"}, {"MR", "Philips Medical Systems", "Intera"},
	}
	mrNew = []scannerSpec{
		{"MR", "SIEMENS", "TrioTim"}, {"MR", "SIEMENS", "Verio"}, {"MR", "SIEMENS", "Skyra"},
		{"MR", "GE MEDICAL SYSTEMS", "Signa HDxt"}, {"MR", "GE MEDICAL SYSTEMS", "DISCOVERY MR750"},
		{"MR", "Philips Medical Systems", "Achieva"}, {"MR", "Philips Medical Systems", "Ingenia"},
	}
	slideScanners = []scannerSpec{{"SM", "Aperio", "ScanScope"}, {"SM", "Leica Biosystems", "Aperio GT 450"}}
	derived       = []scannerSpec{{"SEG", "QIICR", "dcmqi"}, {"RTSTRUCT", "Varian Medical Systems", "ARIA RadOnc"}}
	mammo         = []scannerSpec{{"MG", "HOLOGIC, Inc.", "Lorad Selenia"}, {"MG", "HOLOGIC, Inc.", "Selenia Dimensions"}, {"MG", "GE MEDICAL SYSTEMS", "Senographe Essential"}}
	xray          = []scannerSpec{{"DX", "GE MEDICAL SYSTEMS", "Revolution XQi"}, {"CR", "Kodak", "CR 850"}}
	ultrasound    = []scannerSpec{{"US", "Philips Medical Systems", "iU22"}, {"US", "GE Healthcare", "LOGIQ E9"}}
)

// join concatenates scanner lists.
func join(lists ...[]scannerSpec) []scannerSpec {
	var out []scannerSpec
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

// collections lists the imaging collections, with real IDC collection ids
// and cancer types; patients, studies and devices are synthetic (built on
// first use, not at program start).
var collections = sync.OnceValue(func() []collectionSpec {
	return []collectionSpec{
		{
			id: "nlst", cancerType: "Lung Cancer", patients: 520, idPattern: "1%05d",
			male: 0.59, ageMean: 62, ageSD: 5, ageMin: 55, ageMax: 74,
			years: [2]int{2002, 2004}, studies: [2]int{1, 3}, oldScanners: true,
			studyTypes: []studySpec{{"CT CHEST LOW DOSE SCREENING", "CHEST", 1, []seriesSpec{ctChestThin}}},
			scanners:   ctOld,
			sites: []siteSpec{
				{"Lung Screening Center 01", "Baltimore, MD, USA", 2}, {"Lung Screening Center 02", "Pittsburgh, PA, USA", 2},
				{"Lung Screening Center 03", "Minneapolis, MN, USA", 2}, {"Lung Screening Center 04", "St. Louis, MO, USA", 2},
				{"Lung Screening Center 05", "Salt Lake City, UT, USA", 1}, {"Lung Screening Center 06", "Birmingham, AL, USA", 1},
				{"", "", 4},
			},
		},
		{
			id: "lidc_idri", cancerType: "Lung Cancer", patients: 80, idPattern: "LIDC-IDRI-%04d",
			male: 0.55, ageMean: 60, ageSD: 12, ageMin: 20, ageMax: 89, ageMissing: 1,
			years: [2]int{2000, 2010}, studies: [2]int{1, 1},
			studyTypes: []studySpec{
				{"CT CHEST", "CHEST", 0.85, []seriesSpec{ctChest, {"SEG", "Nodule segmentation - Reader 1", [3]string{}, 0.8, [2]int{1, 1}, nil, nil, [2]float64{}}}},
				{"XR CHEST PA AND LATERAL", "CHEST", 0.15, []seriesSpec{
					{"DX", "PA", [3]string{}, 1, [2]int{1, 1}, nil, [][2]int{{2500, 2048}}, [2]float64{0.139, 0.2}},
					{"CR", "LATERAL", [3]string{}, 0.6, [2]int{1, 1}, nil, [][2]int{{2392, 2048}}, [2]float64{0.168, 0.2}},
				}},
			},
			scanners: join(ctOld, xray),
		},
		{
			id: "nsclc_radiomics", cancerType: "Lung Cancer", patients: 60, idPattern: "LUNG1-%03d",
			male: 0.68, ageMean: 68, ageSD: 10, ageMin: 33, ageMax: 91,
			years: [2]int{2004, 2013}, studies: [2]int{1, 1},
			studyTypes: []studySpec{{"CT THORAX RADIOTHERAPY PLANNING", "LUNG", 1, []seriesSpec{
				{"CT", "CT 3MM", [3]string{}, 1, [2]int{60, 110}, []float64{3}, [][2]int{{512, 512}}, [2]float64{0.88, 0.98}},
				{"RTSTRUCT", "RTSTRUCT GTV-1 Lungs Heart", [3]string{}, 1, [2]int{1, 1}, nil, nil, [2]float64{}},
				{"SEG", "Segmentation of GTV and organs at risk", [3]string{}, 1, [2]int{1, 1}, nil, nil, [2]float64{}},
			}}},
			scanners: join([]scannerSpec{{"CT", "SIEMENS", "Biograph40"}, {"CT", "SIEMENS", "Sensation Open"}, {"CT", "SIEMENS", "SOMATOM Definition AS+"}}, derived),
		},
		{
			id: "tcga_luad", cancerType: "Lung Cancer", patients: 40, idPattern: "TCGA-%s-%04d",
			tss:  []string{"05", "38", "44", "49", "50", "55", "64", "67", "78", "86", "91"},
			male: 0.48, ageMean: 65, ageSD: 10, ageMin: 38, ageMax: 88,
			years: [2]int{1997, 2013}, studies: [2]int{1, 2},
			studyTypes: []studySpec{
				{"CT CHEST W CONTRAST", "CHEST", 0.6, []seriesSpec{{"CT", "AXIAL 5MM CHEST", [3]string{}, 1, [2]int{55, 80}, []float64{5}, [][2]int{{512, 512}}, [2]float64{0.65, 0.85}}}},
				{"Slide microscopy", "LUNG", 0.4, []seriesSpec{slide}},
			},
			scanners: join(ctNew, slideScanners),
		},
		{
			id: "acrin_nsclc_fdg_pet", cancerType: "Lung Cancer", patients: 20, idPattern: "ACRIN-NSCLC-FDG-PET-%03d",
			male: 0.58, ageMean: 65, ageSD: 9, ageMin: 40, ageMax: 88,
			years: [2]int{2007, 2011}, studies: [2]int{1, 2},
			studyTypes: []studySpec{{"PET-CT WHOLE BODY FDG", "CHEST", 1, []seriesSpec{ptWB, ctAC}}},
			scanners:   petCT,
		},
		{
			id: "rider_lung_ct", cancerType: "Lung Cancer", patients: 32, idPattern: "RIDER-%010d",
			male: 0.5, ageMean: 62, ageSD: 11, ageMin: 32, ageMax: 84,
			years: [2]int{2006, 2007}, studies: [2]int{2, 2}, sameDay: true,
			studyTypes: []studySpec{{"CT CHEST WITHOUT CONTRAST", "CHEST", 1, []seriesSpec{{"CT", "1.25MM LUNG", [3]string{}, 1, [2]int{50, 80}, []float64{1.25}, [][2]int{{512, 512}}, [2]float64{0.6, 0.78}}}}},
			scanners:   []scannerSpec{{"CT", "GE MEDICAL SYSTEMS", "LightSpeed16"}, {"CT", "GE MEDICAL SYSTEMS", "LightSpeed VCT"}},
		},
		{
			id: "tcga_brca", cancerType: "Breast Cancer", patients: 45, idPattern: "TCGA-%s-%04d",
			tss:  []string{"A2", "A7", "A8", "AN", "AO", "AR", "B6", "BH", "D8", "E2"},
			male: 0.01, ageMean: 57, ageSD: 12, ageMin: 28, ageMax: 89,
			years: [2]int{1999, 2004}, studies: [2]int{1, 2},
			studyTypes: []studySpec{
				{"MRI BREAST BILATERAL W WO CONTRAST", "BREAST", 0.55, []seriesSpec{
					mrBreast("AX T1 PRE", seqT1GRE3D, 1), mrBreast("AX DYNAMIC POST 1", seqT1GRE3D, 0.9),
					mrBreast("AX T2 FSE", seqT2TSE, 0.8), mrBreast("AX DWI", seqDWI, 0.4),
				}},
				{"MAMMOGRAM BILATERAL", "BREAST", 0.2, []seriesSpec{mgView("L CC"), mgView("L MLO"), mgView("R CC"), mgView("R MLO")}},
				{"Slide microscopy", "BREAST", 0.25, []seriesSpec{slide}},
			},
			scanners: join(mrOld, mammo, slideScanners),
		},
		{
			id: "cbis_ddsm", cancerType: "Breast Cancer", patients: 260, idPattern: "P_%05d",
			male: 0, ageMissing: 1, ageMean: 57, ageSD: 12, ageMin: 30, ageMax: 89,
			years: [2]int{1990, 1999}, studies: [2]int{1, 1}, oldScanners: true,
			studyTypes: []studySpec{{"DIGITIZED FILM MAMMOGRAM", "BREAST", 1, []seriesSpec{
				{"MG", "LEFT CC", [3]string{}, 0.6, [2]int{1, 1}, nil, [][2]int{{4600, 3000}, {5400, 3100}}, [2]float64{0.0435, 0.05}},
				{"MG", "LEFT MLO", [3]string{}, 0.6, [2]int{1, 1}, nil, [][2]int{{4600, 3000}, {5400, 3100}}, [2]float64{0.0435, 0.05}},
				{"MG", "RIGHT CC", [3]string{}, 0.6, [2]int{1, 1}, nil, [][2]int{{4600, 3000}, {5400, 3100}}, [2]float64{0.0435, 0.05}},
				{"MG", "RIGHT MLO", [3]string{}, 0.6, [2]int{1, 1}, nil, [][2]int{{4600, 3000}, {5400, 3100}}, [2]float64{0.0435, 0.05}},
			}}},
			scanners: []scannerSpec{{"MG", "HOWTEK", "MultiRAD850"}, {"MG", "LUMISYS", "LS85 SDR"}},
		},
		{
			id: "qin_breast", cancerType: "Breast Cancer", patients: 15, idPattern: "QIN-BREAST-01-%04d",
			male: 0, ageMean: 52, ageSD: 10, ageMin: 30, ageMax: 78,
			years: [2]int{2010, 2013}, studies: [2]int{1, 3},
			studyTypes: []studySpec{
				{"PET CT BREAST FDG", "CHEST", 0.5, []seriesSpec{ptWB, ctAC}},
				{"MR BREAST DCE", "BREAST", 0.5, []seriesSpec{mrBreast("BREAST DCE", seqT1GRE3D, 1), mrBreast("DWI b800", seqDWI, 0.7)}},
			},
			scanners: join(petCT, []scannerSpec{{"MR", "SIEMENS", "TrioTim"}}),
		},
		{
			id: "breast_mri_nact_pilot", cancerType: "Breast Cancer", patients: 20, idPattern: "UCSF-BR-%02d",
			male: 0, ageMean: 48, ageSD: 9, ageMin: 29, ageMax: 70,
			years: [2]int{1995, 2000}, studies: [2]int{1, 4},
			studyTypes: []studySpec{{"MR BREAST BILATERAL", "BREAST", 1, []seriesSpec{
				mrBreast("Sag 3D SPGR PRE", seqT1GRE3D, 1), mrBreast("Sag 3D SPGR POST", seqT1GRE3D, 1),
			}}},
			scanners: []scannerSpec{{"MR", "GE MEDICAL SYSTEMS", "GENESIS_SIGNA"}, {"MR", "GE MEDICAL SYSTEMS", "SIGNA"}},
		},
		{
			id: "tcga_gbm", cancerType: "Glioblastoma", patients: 40, idPattern: "TCGA-%s-%04d",
			tss:  []string{"02", "06", "08", "12", "14", "19", "27", "76"},
			male: 0.6, ageMean: 58, ageSD: 13, ageMin: 20, ageMax: 86,
			years: [2]int{1993, 2008}, studies: [2]int{1, 3}, oldScanners: true,
			studyTypes: []studySpec{
				{"MRI BRAIN W WO CONTRAST", "BRAIN", 0.88, []seriesSpec{
					mrBrain2D("AX T1", seqT1SE, 0.9), mrBrain2D("AX T2", seqT2TSE, 0.95), mrBrain2D("AX FLAIR", seqFLAIR, 0.9),
					mrBrain2D("AX T1 POST GD", seqT1SE, 0.95), mrBrain2D("AX DWI", seqDWI, 0.6),
				}},
				{"CT HEAD WITHOUT CONTRAST", "HEAD", 0.12, []seriesSpec{ctHead}},
			},
			scanners: join(mrOld, ctOld[:3]),
		},
		{
			id: "upenn_gbm", cancerType: "Glioblastoma", patients: 100, idPattern: "UPENN-GBM-%05d",
			male: 0.6, ageMean: 62, ageSD: 12, ageMin: 18, ageMax: 89, ageYoung: 0.06,
			years: [2]int{2006, 2018}, studies: [2]int{1, 1},
			studyTypes: []studySpec{{"MRI BRAIN TUMOR PROTOCOL", "BRAIN", 1, []seriesSpec{
				mrBrain3D("T1", seqT13D, 1), mrBrain3D("T1GD", seqT13D, 1), mrBrain2D("T2", seqT2TSE, 1),
				mrBrain2D("FLAIR", seqFLAIR, 1), mrBrain2D("DWI", seqDWI, 0.5), mrBrain2D("DTI_ADC", seqADC, 0.6),
				mrBrain2D("DSC", seqDSC, 0.5), {"SEG", "Automated tumor segmentation", [3]string{}, 0.8, [2]int{1, 1}, nil, nil, [2]float64{}},
			}}},
			scanners: join([]scannerSpec{
				{"MR", "SIEMENS", "TrioTim"}, {"MR", "SIEMENS", "Verio"}, {"MR", "SIEMENS", "Skyra"},
				{"MR", "GE MEDICAL SYSTEMS", "Signa HDxt"},
			}, derived),
			sites: []siteSpec{{"Neuro-oncology Imaging Center", "Philadelphia, PA, USA", 1}, {"", "", 1}},
		},
		{
			id: "tcga_kirc", cancerType: "Kidney Cancer", patients: 30, idPattern: "TCGA-%s-%04d",
			tss:  []string{"A3", "B0", "B2", "B8", "BP", "CJ", "CW", "CZ", "DV"},
			male: 0.65, ageMean: 60, ageSD: 11, ageMin: 30, ageMax: 88,
			years: [2]int{1997, 2012}, studies: [2]int{1, 2},
			studyTypes: []studySpec{
				{"CT ABDOMEN PELVIS W CONTRAST", "ABDOMEN", 0.8, []seriesSpec{ctAbdomen, ctArterial}},
				{"MR ABDOMEN W WO CONTRAST", "ABDOMEN", 0.2, []seriesSpec{mrBody("AX T2 HASTE", seqHASTE, 1), mrBody("AX T1 VIBE POST", seqT1GRE3D, 0.9)}},
			},
			scanners: join(ctNew, mrOld),
		},
		{
			id: "cptac_ccrcc", cancerType: "Kidney Cancer", patients: 45, idPattern: "C3L-%05d",
			male: 0.7, ageMean: 61, ageSD: 11, ageMin: 30, ageMax: 86,
			years: [2]int{2015, 2019}, studies: [2]int{1, 2},
			studyTypes: []studySpec{
				{"CT ABD/PELVIS W CONTRAST", "KIDNEY", 0.55, []seriesSpec{ctAbdomen}},
				{"MRI ABDOMEN KIDNEY", "KIDNEY", 0.1, []seriesSpec{mrBody("AX T2 HASTE", seqHASTE, 1), mrBody("COR T1 POST", seqT1GRE3D, 1)}},
				{"Slide microscopy", "KIDNEY", 0.35, []seriesSpec{slide}},
			},
			scanners: join(ctNew, mrNew, slideScanners),
		},
		{
			id: "prostatex", cancerType: "Prostate Cancer", patients: 60, idPattern: "ProstateX-%04d",
			male: 1, ageMean: 64, ageSD: 7, ageMin: 45, ageMax: 80,
			years: [2]int{2011, 2012}, studies: [2]int{1, 1},
			studyTypes: []studySpec{{"MR PROSTAAT KANKER DETECTIE WDS MC MS", "PROSTATE", 1, []seriesSpec{
				mrProstate("t2_tse_tra", seqT2TSE, 1), mrProstate("t2_tse_sag", seqT2TSE, 0.7),
				mrProstate("ep2d_diff_tra_DYNDIST", seqDWIPro, 1), mrProstate("ep2d_diff_tra_DYNDIST_ADC", seqADC, 1),
				mrProstate("tfl_3d PD ref_tra_1.5x1.5_t3", seqPD3D, 0.8),
			}}},
			scanners: []scannerSpec{{"MR", "SIEMENS", "Skyra"}, {"MR", "SIEMENS", "TrioTim"}},
		},
		{
			id: "tcga_lihc", cancerType: "Liver Cancer", patients: 25, idPattern: "TCGA-%s-%04d",
			tss:  []string{"BC", "DD", "ED", "G3", "RC", "ZP"},
			male: 0.68, ageMean: 60, ageSD: 12, ageMin: 25, ageMax: 85,
			years: [2]int{1995, 2013}, studies: [2]int{1, 3},
			studyTypes: []studySpec{
				{"CT ABDOMEN W CONTRAST", "LIVER", 0.45, []seriesSpec{ctArterial, ctAbdomen}},
				{"MR LIVER W WO CONTRAST", "LIVER", 0.25, []seriesSpec{mrBody("AX T2 HASTE", seqHASTE, 1), mrBody("AX T1 VIBE PRE", seqT1GRE3D, 1), mrBody("AX T1 VIBE ARTERIAL", seqT1GRE3D, 0.9)}},
				{"US ABDOMEN LIMITED", "ABDOMEN", 0.2, []seriesSpec{{"US", "LIVER", [3]string{}, 1, [2]int{5, 15}, nil, [][2]int{{600, 800}, {768, 1024}}, [2]float64{}}}},
				{"PET-CT FDG", "ABDOMEN", 0.1, []seriesSpec{ptWB, ctAC}},
			},
			scanners: join(ctNew, mrOld, ultrasound, petCT),
		},
		{
			id: "cmb_crc", cancerType: "Colorectal Cancer", patients: 25, idPattern: "MSB-%05d",
			male: 0.55, ageMean: 62, ageSD: 12, ageMin: 30, ageMax: 88,
			years: [2]int{2019, 2023}, studies: [2]int{1, 3},
			studyTypes: []studySpec{
				{"CT CHEST ABDOMEN PELVIS W CONTRAST", "ABDOMEN", 0.4, []seriesSpec{ctAbdomen}},
				{"CT CHEST W CONTRAST", "CHEST", 0.15, []seriesSpec{{"CT", "AXIAL 5MM CHEST", [3]string{}, 1, [2]int{55, 80}, []float64{5}, [][2]int{{512, 512}}, [2]float64{0.65, 0.85}}}},
				{"MR PELVIS RECTUM STAGING", "PELVIS", 0.15, []seriesSpec{mrBody("AX T2 HIGH RES", seqT2TSE, 1), mrBody("DWI", seqDWI, 0.8)}},
				{"Slide microscopy", "COLON", 0.3, []seriesSpec{slide}},
			},
			scanners: join([]scannerSpec{
				{"CT", "SIEMENS", "SOMATOM Definition Flash"}, {"CT", "GE MEDICAL SYSTEMS", "Revolution CT"},
				{"MR", "Philips Medical Systems", "Ingenia"}, {"MR", "SIEMENS", "Skyra"},
			}, slideScanners),
		},
		{
			id: "pediatric_ct_seg", cancerType: "Various", patients: 35, idPattern: "Pediatric-CT-SEG-%08X",
			male: 0.55, ageMean: 8, ageSD: 5, ageMin: 0, ageMax: 16,
			years: [2]int{2009, 2014}, studies: [2]int{1, 1},
			studyTypes: []studySpec{
				{"CT CHEST", "CHEST", 0.35, []seriesSpec{{"CT", "CHEST 2.5MM", [3]string{}, 1, [2]int{40, 80}, []float64{2.5}, [][2]int{{512, 512}}, [2]float64{0.4, 0.7}}, segAny}},
				{"CT ABDOMEN PELVIS", "ABDOMEN", 0.45, []seriesSpec{{"CT", "ABD 2.5MM", [3]string{}, 1, [2]int{50, 90}, []float64{2.5}, [][2]int{{512, 512}}, [2]float64{0.45, 0.75}}, segAny}},
				{"CT PELVIS", "PELVIS", 0.2, []seriesSpec{{"CT", "PELVIS 2.5MM", [3]string{}, 1, [2]int{30, 60}, []float64{2.5}, [][2]int{{512, 512}}, [2]float64{0.45, 0.75}}, segAny}},
			},
			scanners: join([]scannerSpec{{"CT", "SIEMENS", "SOMATOM Definition AS+"}, {"CT", "SIEMENS", "SOMATOM Force"}}, derived[:1]),
		},
	}
})
