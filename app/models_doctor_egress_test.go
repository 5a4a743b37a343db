package app

import (
	"context"
	"strings"
	"testing"

	"github.com/clinsight/clinsight/localllm/ollamatest"
)

// TestDoctorFlagsCloudModel: a task's model that the server forwards to
// another host (a cloud model) is reported as unusable by the doctor, with
// where its requests would go and what to do, and its task is not usable.
func TestDoctorFlagsCloudModel(t *testing.T) {
	t.Setenv(EnvOllamaHost, "")
	const cloud = "https://ollama.com:443"
	ws := openTemp(t)
	cfg := ws.Config().Models
	srv := ollamatest.New(t,
		ollamatest.Model{Name: cfg.Chat, RemoteHost: cloud},
		ollamatest.Model{Name: cfg.SQL, ContextLength: 32768},
		ollamatest.Model{Name: cfg.Embedding, Embedding: true, Dimension: 768},
	)
	if err := ws.UpdateConfig(func(c *Config) { c.OllamaHost = srv.URL }); err != nil {
		t.Fatal(err)
	}
	rep := ws.Doctor(context.Background())
	found := false
	for _, c := range rep.Checks {
		if !strings.HasPrefix(c.Item, "chat model") {
			continue
		}
		found = true
		if c.OK || !strings.Contains(c.Detail, cloud) || !strings.Contains(c.Fix, "Settings") {
			t.Errorf("chat model check: %+v", c)
		}
	}
	if !found {
		t.Fatalf("no chat model check in %+v", rep.Checks)
	}
	if ok, why := rep.Usable(TaskChat); ok {
		t.Errorf("a cloud chat model is usable (%q)", why)
	}
	if ok, why := rep.Usable(TaskSQL); !ok {
		t.Errorf("the SQL model is not usable: %s", why)
	}
}
