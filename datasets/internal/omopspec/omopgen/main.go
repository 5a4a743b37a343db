// Command omopgen writes the OMOP CDM 5.4 files package datasets embeds
// (the importer's table list and the schema profile) from the official
// specification:
//
//	go run ./internal/omopspec/omopgen -spec ../../shared/data/omop-cdm-5.4/spec -out .
//
// run in the datasets folder (go generate does it).
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/clinsight/clinsight/datasets/internal/omopspec"
)

func main() {
	specDir := flag.String("spec", "../../shared/data/omop-cdm-5.4/spec", "folder of the OMOP CDM 5.4 specification files")
	out := flag.String("out", ".", "the datasets package folder")
	flag.Parse()
	if err := run(*specDir, *out); err != nil {
		fmt.Fprintln(os.Stderr, "omopgen:", err)
		os.Exit(1)
	}
}

func run(specDir, out string) error {
	spec, err := omopspec.Read(specDir)
	if err != nil {
		return err
	}
	src, err := omopspec.RenderGo(spec)
	if err != nil {
		return err
	}
	prof, err := omopspec.RenderProfile(spec)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, omopspec.GoFile), src, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(out, omopspec.ProfileFile), prof, 0o644)
}
