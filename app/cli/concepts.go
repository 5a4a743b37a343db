package cli

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/clinsight/clinsight/app/omop"
)

func newConceptsCmd(f *Factory) *cobra.Command {
	var (
		db, domain string
		limit      int
	)
	cmd := &cobra.Command{
		Use:   `concepts --db DB "term"`,
		Short: "Look a clinical term or code up in an OMOP CDM source's vocabulary (standard concepts, with patient counts)",
		Example: `  clinsight concepts --db demo-omop "T2DM"
  clinsight concepts --db demo-omop E11.9
  clinsight concepts --db demo-omop --domain Drug metformin`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ws, err := f.Workspace()
			if err != nil {
				return err
			}
			src, err := ws.Resolve(db)
			if err != nil {
				return err
			}
			hits, err := ws.Data().SearchConcepts(cmd.Context(), src, args[0], domain, limit)
			if err != nil {
				return err
			}
			if len(hits) == 0 {
				fmt.Fprintf(f.Out, "no concept found for %q\n", args[0])
				return nil
			}
			tw := tabwriter.NewWriter(f.Out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "concept_id\tname\tdomain\tvocabulary\tcode\tpatients\tfound by")
			for _, h := range hits {
				via := h.Via
				if h.MappedFrom != nil {
					via = fmt.Sprintf("maps from %s %s", h.MappedFrom.Vocabulary, h.MappedFrom.Code)
				}
				fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", h.ID, h.Name, h.Domain, h.Vocabulary, h.Code, omop.PersonsText(h.Persons, h.PersonsUnder), via)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().StringVar(&db, "db", "", "OMOP CDM data source name or database file")
	cmd.Flags().StringVar(&domain, "domain", "", "expected domain: Condition, Drug, Measurement, Procedure or Observation")
	cmd.Flags().IntVar(&limit, "limit", 5, "concepts shown")
	_ = cmd.MarkFlagRequired("db")
	return cmd
}
