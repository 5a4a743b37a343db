package impression

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"strings"
)

// DemoSource is the source name of the synthetic demo reports.
const DemoSource = "synthetic demo reports"

// DemoReportCount is how many synthetic reports DemoData writes.
const DemoReportCount = 400

// DemoData writes a few hundred synthetic chest X-ray reports (never real
// ones) into the report corpus of db, replacing earlier demo reports and
// keeping any others, in one transaction. The same seed gives the same
// reports.
func DemoData(ctx context.Context, db *sql.DB, seed uint64) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("demo reports: %w", err)
	}
	defer tx.Rollback()
	if err := setupCorpus(ctx, tx, false); err != nil {
		return fmt.Errorf("demo reports: %w", err)
	}
	if _, err := tx.ExecContext(ctx, "DELETE FROM "+ReportsTable+" WHERE source = ?", DemoSource); err != nil {
		return fmt.Errorf("demo reports: %w", err)
	}
	ins, err := tx.PrepareContext(ctx, insertSQL())
	if err != nil {
		return fmt.Errorf("demo reports: %w", err)
	}
	defer ins.Close()
	for _, r := range SyntheticReports(DemoReportCount, seed) {
		if err := insertReport(ctx, ins, r); err != nil {
			return fmt.Errorf("demo reports: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("demo reports: %w", err)
	}
	return nil
}

// DemoFindings returns n synthetic FINDINGS texts (not in the demo corpus)
// to try the Impressions screen with.
func DemoFindings(n int, seed uint64) []string {
	var out []string
	for _, r := range SyntheticReports(n, seed^0x9e3779b97f4a7c15) {
		out = append(out, r.Findings)
	}
	return out
}

// SyntheticReports generates n synthetic chest X-ray reports, labelled and
// with their eligibility set (IDs 1..n, source DemoSource): mostly normal
// studies, and cardiomegaly, effusions, atelectasis, pneumonia, edema,
// pneumothorax, nodules, devices, fractures and chronic findings in
// plausible proportions, worded in several styles.
func SyntheticReports(n int, seed uint64) []Report {
	rng := rand.New(rand.NewPCG(seed, seed^0x5851f42d4c957f2d))
	out := make([]Report, 0, n)
	for i := range n {
		f, imp := syntheticReport(rng)
		r := Report{ID: int64(i + 1), Source: DemoSource, UID: fmt.Sprintf("demo-%05d", i+1), Findings: f, Impression: imp}
		r.prepare()
		out = append(out, r)
	}
	return out
}

// syntheticReport writes one report's findings and impression.
func syntheticReport(rng *rand.Rand) (findings, impression string) {
	pick := func(options ...string) string { return options[rng.IntN(len(options))] }
	chance := func(p float64) bool { return rng.Float64() < p }
	side := func() string { return pick("right", "left", "bilateral") }
	size := func() string { return pick("small", "small", "moderate", "trace") }

	var f, imp []string
	cardio, effusion, atel, pna, edema, ptx, nodule, device, fracture := chance(0.14), chance(0.11), chance(0.14),
		chance(0.07), chance(0.05), chance(0.03), chance(0.05), chance(0.12), chance(0.03)
	granuloma, spine, hyper := chance(0.10), chance(0.12), chance(0.08)
	if edema {
		cardio = cardio || chance(0.6)
	}

	// Heart and mediastinum.
	if cardio {
		sev := pick("Mild", "Mild", "Moderate", "Stable mild", "Marked")
		f = append(f, pick(sev+" cardiomegaly.", "The heart is "+strings.ToLower(pick("mildly", "moderately"))+" enlarged.",
			"Heart size is enlarged.", sev+" enlargement of the cardiac silhouette."))
		f = append(f, pick("The mediastinal contours are within normal limits.", "Mediastinal contours are stable.", "Normal mediastinal contour."))
	} else {
		f = append(f, pick("The heart is normal in size.", "Heart size is normal.", "The cardiomediastinal silhouette is within normal limits.",
			"Heart size and mediastinal contours are within normal limits.", "Normal heart size and mediastinal contours.",
			"The cardiac silhouette and mediastinum are unremarkable."))
	}
	// Lungs.
	switch {
	case pna:
		s := side()
		loc := pick("lower lobe", "base", "middle lobe", "upper lobe")
		if s == "bilateral" {
			loc = "lower lobes"
		}
		f = append(f, pick("There is focal airspace consolidation in the "+s+" "+loc+".", "Patchy "+s+" "+loc+" airspace opacity.",
			"Focal consolidation is present in the "+s+" "+loc+"."))
		imp = append(imp, pick(capitalize(s)+" "+loc+" pneumonia.", "Findings consistent with "+s+" "+loc+" pneumonia.",
			capitalize(s)+" "+loc+" airspace disease concerning for pneumonia."))
	case edema:
		f = append(f, pick("There is diffuse interstitial edema with vascular congestion.", "Pulmonary vascular congestion and mild interstitial edema.",
			"Increased interstitial markings and cephalization consistent with edema."))
		imp = append(imp, pick("Mild pulmonary edema.", "Congestive heart failure with interstitial edema.", "Pulmonary vascular congestion and mild edema."))
	default:
		f = append(f, pick("The lungs are clear.", "The lungs are clear without focal consolidation.", "No focal airspace disease.",
			"Lungs are clear bilaterally.", "No focal consolidation is identified."))
	}
	if atel {
		s := pick("right basilar", "left basilar", "bibasilar", "lingular", "left base")
		f = append(f, pick("There is "+s+" subsegmental atelectasis.", capitalize(s)+" atelectasis.",
			"Streaky "+s+" opacity consistent with atelectasis."))
		imp = append(imp, pick(capitalize(s)+" atelectasis.", capitalize(s)+" subsegmental atelectasis.", "Mild "+s+" atelectasis."))
	}
	if nodule {
		s := pick("right upper lobe", "left upper lobe", "right lower lobe", "left midlung")
		mm := 4 + rng.IntN(14)
		f = append(f, fmt.Sprintf("There is a %d mm nodule in the %s.", mm, s))
		imp = append(imp, fmt.Sprintf("%d mm %s nodule; CT recommended for further evaluation.", mm, s))
	}
	if granuloma {
		f = append(f, pick("Calcified granuloma in the right upper lobe.", "Scattered calcified granulomas.", "Stable calcified granuloma left lung base."))
	}
	if hyper {
		f = append(f, pick("The lungs are hyperexpanded.", "Hyperinflated lungs consistent with emphysema.", "Flattening of the diaphragms."))
		imp = append(imp, pick("Hyperinflation consistent with COPD.", "Emphysema."))
	}
	// Pleura.
	if effusion {
		s := side()
		word := "effusion"
		if s == "bilateral" {
			word = "effusions"
		}
		sz := size()
		f = append(f, pick("There is a "+sz+" "+s+" pleural "+word+".", capitalize(sz)+" "+s+" pleural "+word+".",
			"Blunting of the "+s+" costophrenic angle consistent with a "+sz+" pleural "+word+"."))
		imp = append(imp, pick(capitalize(sz)+" "+s+" pleural "+word+".", capitalize(s)+" pleural "+word+".", capitalize(sz)+" "+s+" "+word+"."))
	}
	if ptx {
		s := pick("right", "left")
		sz := pick("small", "tiny", "moderate")
		f = append(f, pick("There is a "+sz+" "+s+" apical pneumothorax.", capitalize(sz)+" "+s+" pneumothorax."))
		imp = append([]string{pick(capitalize(sz)+" "+s+" pneumothorax.", capitalize(s)+" apical pneumothorax, "+sz+".")}, imp...)
	}
	if !effusion && !ptx {
		f = append(f, pick("No pleural effusion or pneumothorax.", "There is no pneumothorax or pleural effusion.",
			"No pneumothorax, no pleural effusion.", "No effusion or pneumothorax is seen."))
	}
	// Devices and bones.
	if device {
		f = append(f, pick("Left chest wall pacemaker with leads in the right atrium and right ventricle.", "Median sternotomy wires are intact.",
			"Right-sided PICC line with tip in the superior vena cava.", "Left subclavian port catheter tip in the SVC."))
	}
	if fracture {
		s := pick("right", "left")
		f = append(f, pick("Healed "+s+" rib fractures.", "Acute fracture of the "+s+" posterior "+pick("6th", "7th", "8th")+" rib."))
		imp = append(imp, pick(capitalize(s)+" rib fracture.", "Old "+s+" rib fractures."))
	}
	if spine {
		f = append(f, pick("Degenerative changes of the thoracic spine.", "Mild thoracic spondylosis.", "Mild degenerative changes of the spine."))
	} else {
		f = append(f, pick("No acute bony abnormality.", "The osseous structures are intact.", "No acute osseous abnormality."))
	}
	if len(imp) == 0 {
		imp = append(imp, pick("No acute cardiopulmonary abnormality.", "No acute cardiopulmonary disease.", "No acute cardiopulmonary process.",
			"Normal chest radiograph.", "No active disease."))
	} else if !pna && !edema && chance(0.5) {
		imp = append(imp, "No acute cardiopulmonary process.")
	}
	if cardio {
		imp = append([]string{pick("Cardiomegaly.", "Mild cardiomegaly.", "Stable cardiomegaly.")}, imp...)
	}
	return strings.Join(f, " "), strings.Join(imp, " ")
}

// capitalize upper-cases the first letter of an ASCII phrase.
func capitalize(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}
