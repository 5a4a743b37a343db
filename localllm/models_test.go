package localllm_test

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clinsight/clinsight/localllm"
	"github.com/clinsight/clinsight/localllm/ollamatest"
	"github.com/ollama/ollama/api"
)

func TestPull(t *testing.T) {
	s := newServer(t)
	c := newClient(t, s, localllm.Config{})
	var got []localllm.Progress
	if err := c.Pull(context.Background(), "llama3.1:8b", func(p localllm.Progress) { got = append(got, p) }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 7 || got[0].Status != "pulling manifest" || got[len(got)-1].Status != "success" {
		t.Fatalf("progress = %+v", got)
	}
	if p := got[2]; p.Total != 1000 || p.Completed != 500 || p.Fraction() != 0.5 || p.Digest == "" {
		t.Errorf("progress[2] = %+v", p)
	}
	if r := s.PullRequests(); len(r) != 1 || r[0].Model != "llama3.1:8b" {
		t.Errorf("requests = %+v", r)
	}
	ms, err := c.Models(context.Background())
	if err != nil || len(ms) != 3 || ms[2].Name != "llama3.1:8b" {
		t.Errorf("after pull, Models = %+v, %v", ms, err)
	}
}

func TestPullErrors(t *testing.T) {
	s := newServer(t)
	c := newClient(t, s, localllm.Config{})
	s.QueuePull(ollamatest.ProgressReply{Fault: ollamatest.Fault{Status: 500,
		Error: "pull model manifest: Get \"https://registry.ollama.ai/v2/library/llama3.1/manifests/8b\": dial tcp: lookup registry.ollama.ai: no such host"}})
	err := c.Pull(context.Background(), "llama3.1:8b", nil)
	e := wantKind(t, err, localllm.Server)
	for _, want := range []string{"could not download model llama3.1:8b", "no such host", "use Import in Settings"} {
		if !strings.Contains(e.Message, want) {
			t.Errorf("message lacks %q: %s", want, e.Message)
		}
	}
	// An error in the middle of the stream.
	s.QueuePull(ollamatest.ProgressReply{Progress: []api.ProgressResponse{{Status: "pulling manifest"}}, Fault: ollamatest.Fault{NoDone: true}})
	err = c.Pull(context.Background(), "x", nil)
	wantKind(t, err, localllm.BadReply)
	s.QueuePull(ollamatest.ProgressReply{Fault: ollamatest.Fault{Raw: "{\"status\":\"pulling manifest\"}\n{\"error\":\"pull model manifest: file does not exist\"}\n"}})
	err = c.Pull(context.Background(), "nonexistent", nil)
	e = wantKind(t, err, localllm.Server)
	if !strings.Contains(e.Message, "file does not exist") {
		t.Errorf("message = %s", e.Message)
	}
	s.QueuePull(ollamatest.ProgressReply{Fault: ollamatest.Fault{HangUpAfter: 2}})
	err = c.Pull(context.Background(), "x", nil)
	wantKind(t, err, localllm.ServerDown)
	wantKind(t, c.Pull(context.Background(), "", nil), localllm.Invalid)
	if got := len(s.Models()); got != 2 {
		t.Errorf("failed pulls installed models: %d", got)
	}
}

// writeGGUF writes a file that starts like a GGUF model.
func writeGGUF(t *testing.T, size int) (string, string) {
	t.Helper()
	b := make([]byte, size)
	rand.Read(b)
	copy(b, "GGUF")
	p := filepath.Join(t.TempDir(), "tiny.gguf")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return p, "sha256:" + hex.EncodeToString(sum[:])
}

func TestImportUploadsBlobOnce(t *testing.T) {
	s := newServer(t)
	c := newClient(t, s, localllm.Config{})
	path, digest := writeGGUF(t, 3<<20+123)
	var got []localllm.Progress
	if err := c.Import(context.Background(), "usb-llama:8b", path, func(p localllm.Progress) { got = append(got, p) }); err != nil {
		t.Fatal(err)
	}
	if !s.HasBlob(digest) {
		t.Fatal("blob not uploaded")
	}
	if s.Count(http.MethodHead, "/api/blobs/"+digest) != 1 || s.Count(http.MethodPost, "/api/blobs/"+digest) != 1 {
		t.Errorf("requests = %+v", s.Requests())
	}
	for _, r := range s.Requests() {
		if r.Method == http.MethodPost && strings.HasPrefix(r.Path, "/api/blobs/") && r.Size != 3<<20+123 {
			t.Errorf("uploaded %d bytes", r.Size)
		}
	}
	var statuses []string
	for _, p := range got {
		if len(statuses) == 0 || statuses[len(statuses)-1] != p.Status {
			statuses = append(statuses, p.Status)
		}
	}
	want := "hashing|uploading|parsing GGUF|using existing layer " + digest + "|writing manifest|success"
	if strings.Join(statuses, "|") != want {
		t.Errorf("statuses = %s\nwant       %s", strings.Join(statuses, "|"), want)
	}
	last := got[len(got)-1]
	for _, p := range got {
		if p.Status == "uploading" {
			last = p
		}
	}
	if last.Completed != 3<<20+123 || last.Total != 3<<20+123 {
		t.Errorf("last upload progress = %+v", last)
	}
	cr := s.CreateRequests()
	if len(cr) != 1 || cr[0].Model != "usb-llama:8b" || len(cr[0].Files) != 1 || cr[0].Files["model.gguf"] != digest {
		t.Errorf("create requests = %+v", cr)
	}

	// Second import of the same file under another name: HEAD says
	// present, no upload.
	if err := c.ImportGGUF(context.Background(), localllm.ImportRequest{Name: "usb-llama:copy", Path: path,
		Parameters: map[string]any{"num_thread": 1}, System: "Be brief."}, nil); err != nil {
		t.Fatal(err)
	}
	if s.Count(http.MethodHead, "/api/blobs/") != 2 || s.Count(http.MethodPost, "/api/blobs/") != 1 {
		t.Errorf("second import uploaded again: %+v", s.Requests())
	}
	cr = s.CreateRequests()
	if len(cr) != 2 || cr[1].Parameters["num_thread"] != 1.0 || cr[1].System != "Be brief." || cr[1].Files["model.gguf"] != digest {
		t.Errorf("create requests = %+v", cr)
	}
	ms, _ := c.Models(context.Background())
	if len(ms) != 4 {
		t.Errorf("models after import = %+v", ms)
	}
}

func TestImportErrors(t *testing.T) {
	s := newServer(t)
	c := newClient(t, s, localllm.Config{})
	dir := t.TempDir()
	notGGUF := filepath.Join(dir, "notes.txt")
	os.WriteFile(notGGUF, []byte("hello world"), 0o600)
	short := filepath.Join(dir, "short.gguf")
	os.WriteFile(short, []byte("GG"), 0o600)
	for _, tt := range []struct{ name, path string }{
		{"m", notGGUF},
		{"m", short},
		{"m", filepath.Join(dir, "missing.gguf")},
		{"m", dir},
		{"", notGGUF},
	} {
		err := c.Import(context.Background(), tt.name, tt.path, nil)
		wantKind(t, err, localllm.Invalid)
	}
	if n := len(s.Requests()); n != 0 {
		t.Errorf("%d requests for invalid imports", n)
	}

	path, _ := writeGGUF(t, 1000)
	s.QueueFault("/api/blobs/", ollamatest.Fault{Status: 500, Error: "no space left on device"})
	err := c.Import(context.Background(), "m", path, nil)
	wantKind(t, err, localllm.Server)
	s.QueueFault("/api/blobs/", ollamatest.Fault{}, ollamatest.Fault{Status: 400, Error: "digest mismatch"})
	err = c.Import(context.Background(), "m", path, nil)
	e := wantKind(t, err, localllm.Server)
	if !strings.Contains(e.Message, "could not store the file for model m: digest mismatch") {
		t.Errorf("message = %s", e.Message)
	}
	s.QueueCreate(ollamatest.ProgressReply{Fault: ollamatest.Fault{Raw: "{\"status\":\"parsing GGUF\"}\n{\"error\":\"unsupported architecture\"}\n"}})
	err = c.Import(context.Background(), "m", path, nil)
	e = wantKind(t, err, localllm.Server)
	if !strings.Contains(e.Message, "could not create model m from the file: unsupported architecture") {
		t.Errorf("message = %s", e.Message)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	wantKind(t, c.Import(ctx, "m", path, nil), localllm.Cancelled)
}
