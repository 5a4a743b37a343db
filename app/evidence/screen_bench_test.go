package evidence

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/clinsight/clinsight/localllm"
	"github.com/clinsight/clinsight/localllm/ollamatest"
)

// BenchmarkScreenAll measures screening throughput (studies/s) through the
// real client against a scripted model that takes 10 ms per reply, at
// concurrency 1 and 4. Run with -benchtime 1x.
func BenchmarkScreenAll(b *testing.B) {
	srv := ollamatest.New(b, ollamatest.Model{Name: scriptedModel})
	srv.HandleChat(func(api.ChatRequest) ollamatest.ChatReply {
		time.Sleep(10 * time.Millisecond)
		return ollamatest.ChatReply{Content: `{"verdicts":["YES","UNCERTAIN","NO"]}`}
	})
	c, err := localllm.New(localllm.Config{Host: srv.URL, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	s := &Screener{Chat: c, Model: scriptedModel, PICO: hccPICO, Criteria: testCriteria}
	records := testRecords(64)
	for _, n := range []int{1, 4} {
		b.Run(fmt.Sprintf("concurrency=%d", n), func(b *testing.B) {
			start := time.Now()
			for b.Loop() {
				res, err := s.ScreenAll(context.Background(), records, ScreenOptions{Concurrency: n})
				if err != nil {
					b.Fatal(err)
				}
				if err := Failed(res); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*len(records))/time.Since(start).Seconds(), "studies/s")
		})
	}
}
