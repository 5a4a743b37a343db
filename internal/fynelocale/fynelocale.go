// Package fynelocale keeps Fyne quiet about locales it cannot parse, such as
// C.UTF-8, the default of Debian containers, servers and CI.
//
// Fyne's lang package reads the locale in its package initializer and logs
// three "Fyne error: Error parsing user locale C" lines on stderr when it is
// C.UTF-8 (go-locale turns it into the language "C", which is not a BCP 47
// tag). Every binary that links Fyne runs that initializer, so every
// clinsight subcommand printed those lines, before main could do anything.
//
// This package's initializer runs before Fyne's: the Go spec (since Go 1.21)
// initializes packages in import-path order among those whose imports are
// ready, and this package imports only "os", while Fyne's lang package
// needs "log" and "text/template", which import "os" and sort after
// "github.com/clinsight/...". It hides such a locale from Fyne by setting the
// messages category to "C" (a locale Fyne accepts silently, meaning English),
// and main calls [Restore] first thing to put the environment back as it
// was, so nothing else (character handling, input methods, child
// processes) ever sees the change. TestNoFyneOutputUnderCLocale in package
// main guards the order.
package fynelocale

import "os"

// saved holds the variable changed at init and its original value; it is
// written once by init and read by Restore.
var saved struct {
	name, value string
	set, had    bool
}

func init() { hide() }

// hide sets the messages locale to "C" when Fyne could not parse it.
func hide() {
	name, value := effectiveMessagesLocale()
	if value == "" || value == "C" || value == "POSIX" || fyneParses(value) {
		return
	}
	if name != "LC_ALL" {
		name = "LC_MESSAGES" // overrides LANG for messages only
	}
	saved.name = name
	saved.value, saved.had = os.LookupEnv(name)
	if os.Setenv(name, "C") == nil {
		saved.set = true
	}
}

// Restore puts back the environment variable changed at init, if any.
func Restore() {
	if !saved.set {
		return
	}
	saved.set = false
	if saved.had {
		os.Setenv(saved.name, saved.value)
	} else {
		os.Unsetenv(saved.name)
	}
}

// effectiveMessagesLocale returns the variable that names the locale for
// messages, as github.com/jeandeaual/go-locale (Fyne's reader) looks it up:
// the first non-empty of LC_ALL, LC_MESSAGES and LANG, then LANGUAGE.
func effectiveMessagesLocale() (name, value string) {
	for _, n := range [...]string{"LC_ALL", "LC_MESSAGES", "LANG"} {
		if v := os.Getenv(n); v != "" {
			name, value = n, v
			break
		}
	}
	if value == "C" || value == "POSIX" {
		return name, value
	}
	if v := os.Getenv("LANGUAGE"); v != "" {
		// A problem in LANGUAGE is hidden the same way: Fyne ignores
		// LANGUAGE when the messages locale is C.
		if name == "" {
			name = "LC_MESSAGES"
		}
		return name, v
	}
	return name, value
}

// fyneParses reports whether every colon-separated entry of a locale value
// has a language part of 2 or 3 ASCII letters (as "en" in en_US.UTF-8 or
// "fil" in fil_PH), which is what Fyne's parser accepts; "C.UTF-8",
// "POSIX.UTF-8" or "english" do not.
func fyneParses(value string) bool {
	start := 0
	for i := 0; i <= len(value); i++ {
		if i < len(value) && value[i] != ':' {
			continue
		}
		if !languageLike(value[start:i]) {
			return false
		}
		start = i + 1
	}
	return true
}

// languageLike reports whether loc starts with 2 or 3 ASCII letters
// followed by its end or one of "_-.@".
func languageLike(loc string) bool {
	n := 0
	for n < len(loc) && (loc[n] >= 'a' && loc[n] <= 'z' || loc[n] >= 'A' && loc[n] <= 'Z') {
		n++
	}
	if n < 2 || n > 3 {
		return false
	}
	return n == len(loc) || loc[n] == '_' || loc[n] == '-' || loc[n] == '.' || loc[n] == '@'
}
