package app

import "testing"

// Every SQLite runner the workspace opens shares one count of statements
// left running past their limit, so that the bound holds for the app,
// which opens a runner per query.
func TestRunnerOptionsShareOneAbandonedCount(t *testing.T) {
	ws, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	a, b := ws.RunnerOptions(), ws.RunnerOptions()
	if a.Abandoned == nil || a.Abandoned != b.Abandoned {
		t.Fatalf("runner options of one workspace: abandoned counts %p and %p, want one shared", a.Abandoned, b.Abandoned)
	}
	if a.Timeout != ws.Config().RunnerOptions().Timeout || a.MaxRows != ws.Config().RunnerOptions().MaxRows {
		t.Fatalf("runner options %+v differ from the configuration's limits %+v", a, ws.Config().RunnerOptions())
	}
	other, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if other.RunnerOptions().Abandoned == a.Abandoned {
		t.Fatal("two workspaces share one abandoned count")
	}
}
