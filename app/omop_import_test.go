package app

import (
	"context"
	"testing"

	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/datasets/demo"
)

// TestDemoOMOPSourceAndResolver checks that demo init registers the demo
// OMOP source, that it is recognised as OMOP, and that the cohort
// pipeline of that source (and only of that one) gets a concept resolver.
func TestDemoOMOPSourceAndResolver(t *testing.T) {
	ws, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := ws.InitDemo(ctx, demo.Options{Seed: 3, Patients: 40}, false); err != nil {
		t.Fatal(err)
	}
	src, ok := ws.Source(DemoOMOPSourceName)
	if !ok || src.Kind != SourceOMOP {
		t.Fatalf("demo OMOP source: %+v %v", src, ok)
	}
	for _, tc := range []struct {
		name string
		omop bool
	}{{DemoOMOPSourceName, true}, {DemoSourceName, false}} {
		s, _ := ws.Source(tc.name)
		path, err := ws.file(s)
		if err != nil {
			t.Fatal(err)
		}
		cat, err := ws.Data().Catalog(ctx, s, false)
		if err != nil {
			t.Fatal(err)
		}
		r, closeIt, err := conceptResolver(ctx, path, cat)
		if err != nil {
			t.Fatal(err)
		}
		if (r != nil) != tc.omop || datasets.IsOMOP(cat) != tc.omop {
			t.Errorf("%s: resolver %v, IsOMOP %v, want %v", tc.name, r != nil, datasets.IsOMOP(cat), tc.omop)
		}
		if err := closeIt(); err != nil {
			t.Error(err)
		}
	}
}
