package app

import (
	"strings"
	"testing"
)

func TestDoctorReportUsable(t *testing.T) {
	serverUp := []DoctorCheck{{Item: "model server address", OK: true}, {Item: "model server", OK: true}}
	cases := []struct {
		name   string
		checks []DoctorCheck
		task   string
		ok     bool
		reason string
	}{
		{"installed", append(serverUp, DoctorCheck{Item: "chat model llama3.1:8b", OK: true}), TaskChat, true, ""},
		{"not installed", append(serverUp, DoctorCheck{Item: "chat model llama3.1:8b", Pull: "llama3.1:8b"}), TaskChat, false, "No chat model installed — see Settings."},
		{"none chosen", append(serverUp, DoctorCheck{Item: "embeddings model"}), TaskEmbeddings, false, "No embedding model installed — see Settings."},
		{"cannot do it", append(serverUp, DoctorCheck{Item: "SQL generation model tiny", Detail: "context too short"}), TaskSQL, false, "The SQL model chosen cannot be used — see Settings."},
		{"other task missing", append(serverUp, DoctorCheck{Item: "SQL generation model x", OK: true}, DoctorCheck{Item: "chat model y", Pull: "y"}), TaskSQL, true, ""},
		{"server down", []DoctorCheck{{Item: "model server address", OK: true}, {Item: "model server"}, {Item: "chat model", Detail: "not checked"}}, TaskChat, false, "The model server is not reachable — see Settings."},
		{"bad address", []DoctorCheck{{Item: "model server address"}}, TaskChat, false, "The model server address cannot be used — see Settings."},
		{"not checked", nil, TaskChat, false, "The models have not been checked yet — see Settings."},
	}
	for _, c := range cases {
		ok, why := DoctorReport{Checks: c.checks}.Usable(c.task)
		if ok != c.ok || why != c.reason {
			t.Errorf("%s: Usable(%q) = %v, %q; want %v, %q", c.name, c.task, ok, why, c.ok, c.reason)
		}
		if strings.Contains(why, "--") {
			t.Errorf("%s: a flag in a GUI reason: %q", c.name, why)
		}
	}
}
