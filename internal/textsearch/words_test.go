package textsearch

import (
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestWordsAndTokens(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"The Studies of tumours, β-blockers and Müller's 5-FU", "the studies of tumours β blockers and müller s 5 fu"},
		{"HbA1c 7.5%; T2DM\n", "hba1c 7 5 t2dm"},
		{"", ""},
		{"  -- ", ""},
		{"a\xffb", "a b"}, // invalid UTF-8 separates
	} {
		if got := strings.Join(Words(c.in), " "); got != c.want {
			t.Errorf("Words(%q) = %q, want %q", c.in, got, c.want)
		}
		var low []string
		for _, tk := range Tokens(c.in) {
			low = append(low, tk.Lower)
			if !strings.Contains(c.in, tk.Text) {
				t.Errorf("Tokens(%q): %q is not in the text", c.in, tk.Text)
			}
		}
		if got := strings.Join(low, " "); got != c.want {
			t.Errorf("Tokens(%q) lower = %q, want %q", c.in, got, c.want)
		}
	}
	tk := Tokens("Known HTN, MI.")
	if len(tk) != 3 || tk[1].Text != "HTN" || tk[1].Lower != "htn" || tk[2].Text != "MI" {
		t.Errorf("Tokens kept %+v, want the original spellings HTN and MI", tk)
	}
}

func TestStopWords(t *testing.T) {
	for _, w := range []string{"the", "of", "would", "don", "t", "within"} {
		if !IsStopWord(w) {
			t.Errorf("%q is not a stop word", w)
		}
	}
	// Words that name topics stay, whatever longer lists say.
	for _, w := range []string{"back", "system", "first", "found", "less", "fire", "pain", "The"} {
		if IsStopWord(w) {
			t.Errorf("%q is a stop word", w)
		}
	}
}

func TestAnalyzer(t *testing.T) {
	domain := NewWordSet("study trial")
	a := Analyzer{MinLen: 2, Stop: func(w string) bool { return IsStopWord(w) || domain.Has(w) }, Stem: PluralStem}
	got := strings.Join(a.Terms("The Studies of tumours, β-blockers and Müller's 5-FU in two trials"), " ")
	if want := "tumour blocker müller fu two"; got != want {
		t.Errorf("Terms = %q, want %q", got, want)
	}
	if got := strings.Join(Analyzer{}.Terms("A b, C"), " "); got != "a b c" {
		t.Errorf("zero Analyzer: %q", got)
	}
}

func TestWordsScripts(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"Hello, World!", []string{"hello", "world"}},
		{"COVID-19 (SARS-CoV-2)", []string{"covid", "19", "sars", "cov", "2"}},
		{"HbA1c ≥ 6.5%", []string{"hba1c", "6", "5"}},
		{"Ärztliche Überweisung", []string{"ärztliche", "überweisung"}},
		{"bad\xffutf8", []string{"bad", "utf8"}},
		{"tab\tnew\nline", []string{"tab", "new", "line"}},
	} {
		if got := Words(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("Words(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func FuzzWords(f *testing.F) {
	for _, s := range []string{"", "Hello, World!", "COVID-19", "bad\xffutf8", "ǅungla İstanbul ΣΑΣ", "a1-b2_c3", "\u0130\u212a"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ws := Words(s)
		for _, w := range ws {
			if w == "" || !utf8.ValidString(w) {
				t.Fatalf("bad word %q", w)
			}
			for _, r := range w {
				if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
					t.Fatalf("word %q holds %q", w, r)
				}
			}
		}
		// Idempotent: the words of the joined words are the words.
		if again := Words(strings.Join(ws, " ")); !slices.Equal(again, ws) {
			t.Fatalf("Words not idempotent: %q -> %q", ws, again)
		}
		// Tokens agree with Words.
		tk := Tokens(s)
		if len(tk) != len(ws) {
			t.Fatalf("%d tokens, %d words", len(tk), len(ws))
		}
		for i := range tk {
			if tk[i].Lower != ws[i] || !strings.Contains(s, tk[i].Text) {
				t.Fatalf("token %+v, word %q", tk[i], ws[i])
			}
		}
	})
}
