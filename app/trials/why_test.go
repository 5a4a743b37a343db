package trials

import "testing"

func TestWhy(t *testing.T) {
	q := &Query{Age: 58, HasAge: true, Sex: SexFemale, Concepts: []Concept{
		{Text: "type 2 diabetes", Weight: 1}, {Text: "metformin", Weight: 0.8}, {Text: "smoking", Negated: true}, {Text: "obesity", Weight: 0.5},
	}}
	cases := []struct {
		name string
		t    Trial
		want string
	}{
		{"conditions and interventions", Trial{Conditions: []string{"Type 2 Diabetes Mellitus", "Obesity"}, Interventions: []string{"Metformin"}, Sex: SexAll, MinAge: 18, MaxAge: 75},
			"Conditions: type 2 diabetes, obesity; interventions: metformin; age 58 fits (18–75 years); sex fits."},
		{"only the summary", Trial{Title: "A study", Summary: "Adults with obesity.", Sex: SexMale, MinAge: 60},
			"Mentions obesity; age 58 outside ≥ 60 years; enrols male only."},
		{"negated never named", Trial{Conditions: []string{"Smoking"}, Sex: SexAll},
			"Related words in the description; age 58 fits (any age); sex fits."},
	}
	for _, c := range cases {
		if got := Why(q, &c.t); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
}
