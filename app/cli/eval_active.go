package cli

import (
	"encoding/json"
	"fmt"
	"image/color"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/clinsight/clinsight/app/evidence"
	"github.com/clinsight/clinsight/internal/atomicfile"
)

// activeReviewJSON is one review in the --json output of "eval active".
type activeReviewJSON struct {
	Review   string  `json:"review"`
	Records  int     `json:"records"`
	Relevant int     `json:"relevant"`
	WSS95    float64 `json:"wss95"`
	WSS100   float64 `json:"wss100"`
	RRF10    float64 `json:"rrf10"`
	N95      float64 `json:"screened_to_95"`
}

// activeJSON is the last line of "eval active --json".
type activeJSON struct {
	WSS95     float64            `json:"wss95"`
	WSS100    float64            `json:"wss100"`
	RRF10     float64            `json:"rrf10"`
	N95       float64            `json:"screened_to_95"`
	Reviews   int                `json:"reviews"`
	Seeds     int                `json:"seeds"`
	Learner   string             `json:"learner"`
	PerReview []activeReviewJSON `json:"per_review"`
}

// attachActiveEval adds "eval active" under root's "eval" command.
func attachActiveEval(f *Factory, root *cobra.Command) {
	evalCommand(root).AddCommand(newEvalActiveCmd(f))
}

func newEvalActiveCmd(f *Factory) *cobra.Command {
	var (
		dir, plotOut string
		seeds, batch int
		asJSON       bool
	)
	cmd := &cobra.Command{
		Use:   "active --reviews DIR [--seeds 5] [--batch 1] [--json] [--plot OUT.png]",
		Short: "WSS@95, WSS@100 and RRF@10 of active-learning screening simulated on labelled reviews",
		Long: `Reads every *.csv of DIR as one labelled review (columns title, abstract,
label_included and optionally keywords: the Cohen 2006 files and ASReview's
format) and simulates screening it with the Screen step's active learner:
starting from one random included and one random excluded record (one pair
per seed, seeds 0..N-1), the reviewer screens the record ranked first, the
learner retrains after every --batch decisions, until every included record
is found. Prints per review and on average WSS@95 and WSS@100 (work saved
over sampling at 95% / 100% recall), RRF@10 (recall after screening 10% of
the records) and the records screened to reach 95% recall.`,
		Example: `  clinsight eval active --reviews ../shared/data/screening-cohen-2006 --json
  clinsight eval active --reviews ../shared/data/screening-cohen-2006 --seeds 5 --plot recall.png`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if dir == "" {
				return fmt.Errorf("eval active: --reviews DIR is required")
			}
			if seeds < 1 || seeds > 1000 {
				return fmt.Errorf("eval active: --seeds must be between 1 and 1000")
			}
			revs, err := evidence.ReadLabelledDir(dir)
			if err != nil {
				return fmt.Errorf("eval active: %w (check --reviews)", err)
			}
			opt := evidence.SimOptions{Learner: evidence.DefaultLearner, Features: evidence.DefaultFeatureOptions, Batch: batch}
			ev, err := evidence.EvalActive(cmd.Context(), revs, opt, seeds)
			if err != nil {
				return fmt.Errorf("eval active: %w", err)
			}
			if plotOut != "" {
				if err := writeRecallPlot(plotOut, ev); err != nil {
					return fmt.Errorf("eval active: %w (check --plot)", err)
				}
			}
			out := cmd.OutOrStdout()
			if asJSON {
				return writeActiveJSON(out, ev, seeds, opt.Learner)
			}
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "review\trecords\tincluded\tWSS@95\tWSS@100\tRRF@10\tscreened to 95%")
			for _, r := range ev.Reviews {
				fmt.Fprintf(tw, "%s\t%d\t%d\t%.3f\t%.3f\t%.3f\t%.1f\n", r.Name, r.Records, r.Relevant, r.WSS95, r.WSS100, r.RRF10, r.N95Mean)
			}
			fmt.Fprintf(tw, "mean (%d reviews)\t\t\t%.3f\t%.3f\t%.3f\t%.1f\n", len(ev.Reviews), ev.WSS95, ev.WSS100, ev.RRF10, ev.N95)
			if err := tw.Flush(); err != nil {
				return err
			}
			_, err = fmt.Fprintf(out, "%d seeds; learner %s\n", seeds, opt.Learner)
			return err
		},
	}
	cmd.Flags().StringVar(&dir, "reviews", "", "folder of labelled review CSVs (title, abstract, label_included[, keywords])")
	cmd.Flags().IntVar(&seeds, "seeds", 5, "number of simulations per review (seeds 0..N-1)")
	cmd.Flags().IntVar(&batch, "batch", 1, "decisions between retrainings (1 = after every decision)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object (means and per_review)")
	cmd.Flags().StringVar(&plotOut, "plot", "", "write the recall curves (first seed) and the random-order line to this PNG")
	return cmd
}

func writeActiveJSON(w io.Writer, ev evidence.ActiveEval, seeds int, lc evidence.LearnerConfig) error {
	js := activeJSON{WSS95: ev.WSS95, WSS100: ev.WSS100, RRF10: ev.RRF10, N95: ev.N95, Reviews: len(ev.Reviews), Seeds: seeds, Learner: lc.String()}
	for _, r := range ev.Reviews {
		js.PerReview = append(js.PerReview, activeReviewJSON{Review: r.Name, Records: r.Records, Relevant: r.Relevant, WSS95: r.WSS95, WSS100: r.WSS100, RRF10: r.RRF10, N95: r.N95Mean})
	}
	b, err := json.Marshal(js)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(w, string(b))
	return err
}

// writeRecallPlot draws each review's recall against the share of records
// screened (first seed) and the random-order diagonal.
func writeRecallPlot(path string, ev evidence.ActiveEval) error {
	p := plot.New()
	p.Title.Text = "Active-learning screening: recall curves"
	p.X.Label.Text = "Share of records screened"
	p.Y.Label.Text = "Recall (included records found)"
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, 1, 0, 1
	random, err := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}, {X: 1, Y: 1}})
	if err != nil {
		return err
	}
	random.Color = color.Gray{Y: 0x80}
	random.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	p.Add(random)
	p.Legend.Add("random order", random)
	p.Legend.Top, p.Legend.Left = false, false
	for k, r := range ev.Reviews {
		pts := make(plotter.XYs, 0, len(r.FirstSeed.Order)+1)
		pts = append(pts, plotter.XY{})
		found := 0
		inc := r.FirstSeed.Included
		for i, idx := range r.FirstSeed.Order {
			if inc[idx] {
				found++
			}
			pts = append(pts, plotter.XY{X: float64(i+1) / float64(r.Records), Y: float64(found) / float64(r.Relevant)})
		}
		ln, err := plotter.NewLine(pts)
		if err != nil {
			return err
		}
		ln.Color = plotutil.Color(k)
		ln.Width = vg.Points(1.2)
		p.Add(ln)
		p.Legend.Add(r.Name, ln)
	}
	wt, err := p.WriterTo(7*vg.Inch, 5*vg.Inch, "png")
	if err != nil {
		return err
	}
	return atomicfile.Write(path, 0o644, func(w io.Writer) error {
		_, err := wt.WriteTo(w)
		return err
	})
}
