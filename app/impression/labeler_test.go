package impression

import (
	"strings"
	"testing"
)

func TestLabelText(t *testing.T) {
	type want map[Observation]Label
	for _, c := range []struct {
		text string
		want want
	}{
		{"No pneumothorax or pleural effusion.", want{Pneumothorax: Negative, PleuralEffusion: Negative, NoFinding: Positive}},
		{"There is no focal consolidation, pleural effusion, or pneumothorax.",
			want{Consolidation: Negative, PleuralEffusion: Negative, Pneumothorax: Negative, NoFinding: Positive}},
		{"Small right pleural effusion.", want{PleuralEffusion: Positive, NoFinding: Blank}},
		{"Mild cardiomegaly. The lungs are clear.", want{Cardiomegaly: Positive, NoFinding: Blank}},
		{"Heart size is normal.", want{Cardiomegaly: Negative, NoFinding: Positive}},
		{"The heart is normal in size.", want{Cardiomegaly: Negative}},
		{"Heart size is mildly enlarged.", want{Cardiomegaly: Positive}},
		{"Heart size is upper limits of normal.", want{Cardiomegaly: Uncertain}},
		{"The heart is not enlarged.", want{Cardiomegaly: Negative}},
		{"Heart size and mediastinal contours are within normal limits.", want{Cardiomegaly: Negative, EnlargedCardiomediastinum: Negative}},
		{"The mediastinum is widened.", want{EnlargedCardiomediastinum: Positive}},
		// Negation cues.
		{"The lungs are clear without evidence of effusion.", want{PleuralEffusion: Negative}},
		{"Negative for pneumothorax.", want{Pneumothorax: Negative}},
		{"Lungs are clear of infiltrate.", want{LungOpacity: Negative}},
		{"The previously seen effusion has resolved.", want{PleuralEffusion: Negative}},
		{"Resolved left lower lobe pneumonia.", want{Pneumonia: Negative}},
		// Uncertainty cues.
		{"Possible left lower lobe pneumonia.", want{Pneumonia: Uncertain, NoFinding: Blank}},
		{"Early pneumonia may be present.", want{Pneumonia: Uncertain}},
		{"Cannot exclude a small effusion.", want{PleuralEffusion: Uncertain}},
		{"A small effusion cannot be excluded.", want{PleuralEffusion: Uncertain}},
		{"Left basilar atelectasis versus pneumonia.", want{Atelectasis: Uncertain, Pneumonia: Uncertain}},
		{"Atelectasis or scarring at the bases.", want{Atelectasis: Uncertain}},
		{"Pneumothorax?", want{Pneumothorax: Uncertain}},
		// A negation with a pre-negation uncertainty stays uncertain.
		{"No definite pneumonia, though early infiltrate is not excluded.", want{Pneumonia: Negative, LungOpacity: Uncertain}},
		// Pseudo-triggers do not negate; a later clause is not negated.
		{"No change in the moderate right pleural effusion.", want{PleuralEffusion: Positive}},
		{"No pneumothorax but there is a small left effusion.", want{Pneumothorax: Negative, PleuralEffusion: Positive}},
		// Exclusions: not pleural effusions.
		{"Small pericardial effusion.", want{PleuralEffusion: Blank}},
		// Heart failure makes cardiomegaly uncertain (CheXpert's rule).
		{"Findings of congestive heart failure.", want{Edema: Positive, Cardiomegaly: Uncertain}},
		// Support devices do not rule out No Finding; other findings do.
		{"Sternotomy wires are intact. The lungs are clear.", want{SupportDevices: Positive, NoFinding: Positive}},
		{"Calcified granuloma in the right upper lobe.", want{NoFinding: Blank}},
		{"Degenerative changes of the thoracic spine.", want{NoFinding: Blank}},
		{"Healed left rib fractures.", want{Fracture: Positive}},
		{"There is a 6 mm nodule in the left upper lobe.", want{LungLesion: Positive}},
		{"XXXX basilar atelectasis. Lungs otherwise clear.", want{Atelectasis: Positive}},
		// Decimal numbers do not end a sentence.
		{"No 1.5 cm nodule or effusion.", want{LungLesion: Negative, PleuralEffusion: Negative}},
		{"", want{NoFinding: Positive, Cardiomegaly: Blank}},
	} {
		got := LabelText(c.text)
		for o, l := range c.want {
			if got[o] != l {
				t.Errorf("%q: %s = %s, want %s (labels %s; mentions %+v)", c.text, o, got[o], l, got, Mentions(c.text))
			}
		}
		if !got.valid() {
			t.Errorf("%q: invalid vector %v", c.text, got)
		}
	}
}

func TestLabelsVector(t *testing.T) {
	l := LabelText("Mild cardiomegaly. No effusion.")
	if l[Cardiomegaly] != 1 || l[PleuralEffusion] != 0 || l[Fracture] != 2 || l[NoFinding] != 2 {
		t.Fatalf("vector %v", l)
	}
	if got := l.String(); got != "Cardiomegaly=1 Pleural Effusion=0" {
		t.Errorf("String = %q", got)
	}
	if got := l.Positives(); got != "Cardiomegaly" {
		t.Errorf("Positives = %q", got)
	}
	b := BlankLabels()
	// Blank is 2: cardiomegaly 1 vs 2 → 1; effusion 0 vs 2 → 4.
	if d := l.Distance2(b); d != 5 {
		t.Errorf("Distance2 = %d, want 5", d)
	}
	if d := l.Distance2(l); d != 0 {
		t.Errorf("self distance %d", d)
	}
	for _, o := range AllObservations() {
		if p, ok := ParseObservation(o.String()); !ok || p != o {
			t.Errorf("ParseObservation(%q)", o)
		}
		if p, ok := ParseObservation(o.Column()); !ok || p != o {
			t.Errorf("ParseObservation(%q)", o.Column())
		}
	}
	if Observation(99).String() != "Observation(99)" || Label(7).String() != "Label(7)" {
		t.Error("out-of-range names")
	}
}

func TestMentions(t *testing.T) {
	ms := Mentions("Possible small right pleural effusion. No pneumothorax.")
	var got []string
	for _, m := range ms {
		got = append(got, m.Observation.String()+"/"+m.Text+"/"+m.Label.String())
	}
	want := "Pleural Effusion/effusion/uncertain Pneumothorax/pneumothorax/negative"
	if strings.Join(got, " ") != want {
		t.Errorf("mentions %q, want %q", strings.Join(got, " "), want)
	}
}

func TestMeSHObservations(t *testing.T) {
	obs, ok := MeSHObservations("Cardiomegaly/borderline;Pulmonary Artery/enlarged")
	if !ok || !obs[Cardiomegaly] || obs[NoFinding] {
		t.Errorf("cardiomegaly: %v %v", obs, ok)
	}
	obs, ok = MeSHObservations("normal")
	if !ok || !obs[NoFinding] {
		t.Errorf("normal: %v", obs)
	}
	if _, ok := MeSHObservations("No Indexing"); ok {
		t.Error("No Indexing must be left out")
	}
	obs, _ = MeSHObservations("Opacity/lung/base/left;Density/ribs;Hydropneumothorax/right;Thickening/pleura;Catheters, Indwelling/right")
	if !obs[LungOpacity] || !obs[Pneumothorax] || !obs[PleuralEffusion] || !obs[PleuralOther] || !obs[SupportDevices] || obs[LungLesion] {
		t.Errorf("mapping: %v", obs)
	}
	obs, _ = MeSHObservations("Density/ribs")
	if obs[LungOpacity] {
		t.Error("a rib density is not a lung opacity")
	}
}

func FuzzLabelText(f *testing.F) {
	for _, s := range []string{"No effusion.", "Heart size upper limits of normal", "1.5. .. ,,, ?", "XXXX or XXXX versus"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if l := LabelText(s); !l.valid() {
			t.Fatalf("invalid labels %v", l)
		}
	})
}

// TestLabelNegatedParticiple: a word right after "no" ("no visualized
// pneumothorax", frequent in Open-i) does not end the negation's scope.
func TestLabelNegatedParticiple(t *testing.T) {
	for text, want := range map[string]struct {
		o Observation
		l Label
	}{
		"No visualized pneumothorax.":                      {Pneumothorax, Negative},
		"No increased opacity in the right lower lobe.":    {LungOpacity, Negative},
		"No visible pneumothorax.":                         {Pneumothorax, Negative},
		"Small pneumothorax visualized at the right apex.": {Pneumothorax, Positive},
		"No effusion. Pneumothorax is visualized.":         {Pneumothorax, Positive},
	} {
		if got := LabelText(text)[want.o]; got != want.l {
			t.Errorf("%q: %s %s, want %s", text, want.o, got, want.l)
		}
	}
}
