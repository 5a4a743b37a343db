package fynelocale

import (
	"os"
	"testing"
)

func TestHideAndRestore(t *testing.T) {
	for _, tc := range []struct {
		env     map[string]string
		changed string // the variable set to "C", "" for none
	}{
		{map[string]string{"LANG": "C.UTF-8"}, "LC_MESSAGES"},
		{map[string]string{"LANG": "C.utf8", "LC_MESSAGES": "POSIX.UTF-8"}, "LC_MESSAGES"},
		{map[string]string{"LC_ALL": "C.UTF-8", "LANG": "en_US.UTF-8"}, "LC_ALL"},
		{map[string]string{"LANG": "en_US.UTF-8", "LANGUAGE": "C.UTF-8:en"}, "LC_MESSAGES"},
		{map[string]string{"LANG": "english"}, "LC_MESSAGES"},
		{map[string]string{"LANG": "C"}, ""},
		{map[string]string{"LANG": "POSIX", "LANGUAGE": "C.UTF-8"}, ""}, // LANGUAGE is ignored under C
		{map[string]string{"LANG": "de_DE.UTF-8"}, ""},
		{map[string]string{"LANG": "C.UTF-8", "LANGUAGE": "fr:en"}, ""}, // Fyne reads LANGUAGE: fine
		{map[string]string{"LANG": "sr_RS@latin"}, ""},
		{map[string]string{}, ""},
	} {
		for _, n := range []string{"LC_ALL", "LC_MESSAGES", "LANG", "LANGUAGE"} {
			t.Setenv(n, tc.env[n])
			if _, ok := tc.env[n]; !ok {
				os.Unsetenv(n)
			}
		}
		hide()
		for _, n := range []string{"LC_ALL", "LC_MESSAGES", "LANG", "LANGUAGE"} {
			v, ok := os.LookupEnv(n)
			want, wantOK := tc.env[n]
			if n == tc.changed {
				want, wantOK = "C", true
			}
			if v != want || ok != wantOK {
				t.Errorf("%v: after hide %s = %q (set %v), want %q", tc.env, n, v, ok, want)
			}
		}
		Restore()
		for _, n := range []string{"LC_ALL", "LC_MESSAGES", "LANG", "LANGUAGE"} {
			v, ok := os.LookupEnv(n)
			want, wantOK := tc.env[n]
			if v != want || ok != wantOK {
				t.Errorf("%v: after Restore %s = %q (set %v), want %q", tc.env, n, v, ok, want)
			}
		}
	}
}
