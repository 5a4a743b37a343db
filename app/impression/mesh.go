package impression

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/clinsight/clinsight/internal/textenc"
)

// The Open-i reports carry MeSH annotations ("Cardiomegaly/mild;Pleural
// Effusion/bilateral", or "normal"), made by people from the report. They
// serve as weak labels for the observation labeler, mapped to CheXpert's
// observations by the primary heading (and, where a heading is used for
// several organs, its first subheading):
//
//	normal                                         → No Finding
//	Mediastinum                                    → Enlarged Cardiomediastinum
//	Cardiomegaly; Cardiac Shadow/enlarged;
//	  Heart/enlarged; Heart Ventricles/enlarged      → Cardiomegaly
//	Nodule; Mass; Cavitation (lung or pulmonary)   → Lung Lesion
//	Opacity; Density; Airspace Disease; Infiltrate;
//	  Cicatrix (lung); Markings; Pulmonary Fibrosis;
//	  Lung Diseases, Interstitial (of the lung, not
//	  of bones, soft tissue or the mediastinum)     → Lung Opacity
//	Pulmonary Edema; Pulmonary Congestion;
//	  Heart Failure                                → Edema
//	Consolidation                                  → Consolidation
//	Pneumonia                                      → Pneumonia
//	Pulmonary Atelectasis                          → Atelectasis
//	Pneumothorax; Hydropneumothorax;
//	  Hemopneumothorax                             → Pneumothorax
//	Pleural Effusion; Hydropneumothorax            → Pleural Effusion
//	Thickening/pleura; Cicatrix/pleura; Pleura;
//	  Calcinosis/pleura                            → Pleural Other
//	Fractures, Bone                                → Fracture
//	Catheters, Indwelling; Surgical Instruments;
//	  Implanted Medical Device; Medical Device;
//	  Tube, Inserted; Stents; Sutures              → Support Devices
//
// Other headings (calcified granulomas, degenerative spine, tortuous
// aorta, hyperinflation, ...) map to no observation but, like any finding,
// mean "not normal". Reports indexed "No Indexing" have no annotation and
// are left out of the evaluation.

// nonLungSites are subheadings that place a heading outside the lung.
var nonLungSites = map[string]bool{
	"ribs": true, "bone and bones": true, "breast": true, "mediastinum": true, "heart": true,
	"spine": true, "thoracic vertebrae": true, "lumbar vertebrae": true, "cervical vertebrae": true,
	"clavicle": true, "soft tissue": true, "abdomen": true, "shoulder": true, "humerus": true,
	"scapula": true, "sternum": true, "diaphragm": true, "aorta": true, "trachea": true,
	"lymph nodes": true, "nipples": true, "skin": true, "neck": true, "stomach": true,
	"costophrenic angle": true, "pleura": true,
}

// MeSHObservations maps a report's MeSH field to the observations it
// annotates. ok is false for "No Indexing" (no annotation).
func MeSHObservations(mesh string) (obs [NumObservations]bool, ok bool) {
	mesh = strings.TrimSpace(mesh)
	if mesh == "" || strings.EqualFold(mesh, "No Indexing") {
		return obs, false
	}
	if strings.EqualFold(mesh, "normal") {
		obs[NoFinding] = true
		return obs, true
	}
	for _, term := range strings.Split(mesh, ";") {
		parts := strings.Split(term, "/")
		head := strings.ToLower(strings.Join(strings.Fields(parts[0]), " "))
		sub := ""
		if len(parts) > 1 {
			sub = strings.ToLower(strings.TrimSpace(parts[1]))
		}
		lung := !nonLungSites[sub]
		switch head {
		case "normal":
			obs[NoFinding] = true
		case "mediastinum":
			obs[EnlargedCardiomediastinum] = true
		case "cardiomegaly":
			obs[Cardiomegaly] = true
		case "cardiac shadow", "heart", "heart ventricles":
			if sub == "enlarged" {
				obs[Cardiomegaly] = true
			}
		case "nodule", "mass", "cavitation":
			if lung {
				obs[LungLesion] = true
			}
		case "opacity", "density", "airspace disease", "infiltrate", "markings",
			"pulmonary fibrosis", "lung diseases, interstitial":
			if lung {
				obs[LungOpacity] = true
			}
		case "cicatrix":
			if sub == "pleura" {
				obs[PleuralOther] = true
			} else if lung {
				obs[LungOpacity] = true
			}
		case "pulmonary edema", "pulmonary congestion", "heart failure":
			obs[Edema] = true
		case "consolidation":
			obs[Consolidation] = true
		case "pneumonia":
			obs[Pneumonia] = true
		case "pulmonary atelectasis":
			obs[Atelectasis] = true
		case "pneumothorax", "hemopneumothorax":
			obs[Pneumothorax] = true
		case "hydropneumothorax":
			obs[Pneumothorax] = true
			obs[PleuralEffusion] = true
		case "pleural effusion":
			obs[PleuralEffusion] = true
		case "pleura":
			obs[PleuralOther] = true
		case "thickening", "calcinosis":
			if sub == "pleura" {
				obs[PleuralOther] = true
			}
		case "fractures, bone":
			obs[Fracture] = true
		case "catheters, indwelling", "surgical instruments", "implanted medical device",
			"medical device", "tube, inserted", "stents", "sutures":
			obs[SupportDevices] = true
		}
	}
	return obs, true
}

// ObservationScore is the labeler's agreement with the reference for one
// observation: a report counts as predicted when the labeler says positive
// (or uncertain, in the "U-Ones" reading EvaluateLabeler uses by default:
// the Open-i annotators index alternatives such as "atelectasis or
// scarring" as findings).
type ObservationScore struct {
	Precision float64 `json:"precision"`
	Recall    float64 `json:"recall"`
	F1        float64 `json:"f1"`
	// Support is the number of reports the reference annotates with it.
	Support int `json:"support"`
	// TP, FP and FN count true positives, false positives and false
	// negatives.
	TP int `json:"tp"`
	FP int `json:"fp"`
	FN int `json:"fn"`
}

// LabelerEvaluation scores the labeler against MeSH annotations.
type LabelerEvaluation struct {
	// Reports is the number of reports evaluated (annotated, with findings
	// or an impression).
	Reports int
	// Skipped counts reports left out (no annotation, or no text).
	Skipped int
	// Scores are per observation, in vector order.
	Scores [NumObservations]ObservationScore
}

// ReferenceReport is an annotated report for the labeler evaluation.
type ReferenceReport struct {
	UID, MeSH, Findings, Impression string
}

// EvaluateLabeler labels each report's FINDINGS and IMPRESSION and compares
// the result with its MeSH annotations (see MeSHObservations). With
// uncertainPositive an uncertain label counts as a positive prediction
// (CheXpert's "U-Ones"), otherwise as a negative one.
func EvaluateLabeler(ctx context.Context, reports []ReferenceReport, uncertainPositive bool) (LabelerEvaluation, error) {
	var ev LabelerEvaluation
	var tp, fp, fn [NumObservations]int
	for i, r := range reports {
		if i%256 == 0 {
			if err := ctx.Err(); err != nil {
				return ev, err
			}
		}
		gold, ok := MeSHObservations(r.MeSH)
		text := strings.TrimSpace(r.Findings + "\n" + r.Impression)
		if !ok || text == "" {
			ev.Skipped++
			continue
		}
		ev.Reports++
		labels := LabelText(text)
		for o := range NumObservations {
			pred := labels[o] == Positive || (uncertainPositive && labels[o] == Uncertain)
			switch {
			case pred && gold[o]:
				tp[o]++
			case pred:
				fp[o]++
			case gold[o]:
				fn[o]++
			}
		}
	}
	for o := range NumObservations {
		s := ObservationScore{TP: tp[o], FP: fp[o], FN: fn[o], Support: tp[o] + fn[o]}
		if tp[o]+fp[o] > 0 {
			s.Precision = float64(tp[o]) / float64(tp[o]+fp[o])
		}
		if tp[o]+fn[o] > 0 {
			s.Recall = float64(tp[o]) / float64(tp[o]+fn[o])
		}
		if s.Precision+s.Recall > 0 {
			s.F1 = 2 * s.Precision * s.Recall / (s.Precision + s.Recall)
		}
		ev.Scores[o] = s
	}
	return ev, nil
}

// ReadReferenceReports reads an Open-i CSV with MeSH annotations (columns
// uid, MeSH, findings, impression; others ignored).
func ReadReferenceReports(path string) ([]ReferenceReport, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read reference reports: %w", err)
	}
	defer f.Close()
	// Fields cut to their bound as they stream in; a record over the
	// bound is refused.
	r := csv.NewReader(newCSVClip(textenc.UTF8(f), ',', maxFieldBytes, maxRecordBytes))
	header, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("read reference reports %s: header: %w", path, err)
	}
	col := map[string]int{}
	for i, h := range header {
		col[strings.ToLower(strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")))] = i
	}
	for _, need := range []string{"mesh", "findings", "impression"} {
		if _, ok := col[need]; !ok {
			return nil, fmt.Errorf("read reference reports %s: no %q column (have %s)", path, need, strings.Join(header, ", "))
		}
	}
	get := func(rec []string, name string) string {
		if i, ok := col[name]; ok && i < len(rec) {
			return rec[i]
		}
		return ""
	}
	var out []ReferenceReport
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read reference reports %s: %w", path, err)
		}
		out = append(out, ReferenceReport{UID: get(rec, "uid"), MeSH: get(rec, "mesh"),
			Findings: get(rec, "findings"), Impression: get(rec, "impression")})
	}
}
