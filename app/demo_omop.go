package app

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/clinsight/clinsight/datasets/demo"
)

// DemoOMOPSourceName is the name of the demo OMOP source: the demo
// population as an OMOP CDM 5.4 instance, for the concept-set flow of
// cohort discovery.
const DemoOMOPSourceName = "demo-omop"

// demoOMOPFile is the demo OMOP database's file name in the data directory.
const demoOMOPFile = "demo-omop.sqlite"

// DemoOMOPPath returns where the demo OMOP source lives in this workspace.
func (ws *Workspace) DemoOMOPPath() string { return filepath.Join(ws.DataDir(), demoOMOPFile) }

// initDemoOMOP writes the demo OMOP source from the demo database (when
// regenerate is set or it is missing) and registers it. The file is
// Clinsight's own and derived from the demo: it is replaced whenever the
// demo is generated again.
func (ws *Workspace) initDemoOMOP(ctx context.Context, regenerate bool) error {
	path := ws.DemoOMOPPath()
	_, err := os.Stat(path)
	missing := errors.Is(err, fs.ErrNotExist)
	if regenerate || missing {
		if err := ws.checkWritable(path); err != nil {
			return err
		}
		if _, err := demo.GenerateOMOP(ctx, ws.DemoPath(), path, demo.OMOPOptions{Overwrite: true}); err != nil {
			return fmt.Errorf("create the demo OMOP source: %w", err)
		}
	}
	_, err = ws.RegisterImported(DemoOMOPSourceName, path, SourceOMOP,
		"synthetic demo data as an OMOP CDM 5.4 instance (SNOMED, RxNorm, LOINC concepts); no real patients")
	return err
}
