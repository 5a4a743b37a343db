package main

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// networkCode lists every package outside Go's standard library, linked into
// the clinsight binary (desktop or command-line build), that imports net or
// net/http, and why it cannot send anything anywhere but the configured model
// host or PostgreSQL server. Each was read for this list.
var networkCode = map[string]string{
	"github.com/clinsight/clinsight/localllm":          "the model client: the configured host only, no proxy, no redirect (TestEgressProxySettingsIgnored, TestRedirectNeverFollowed)",
	"github.com/ollama/ollama/api":                     "its Client, through localllm's transport; it signs requests when OLLAMA_AUTH is set, which the transport strips (TestEgressOllamaAuthNeverSigns)",
	"github.com/ollama/ollama/envconfig":               "net.SplitHostPort on OLLAMA_HOST; no connection",
	"github.com/philippgille/chromem-go":               "its embedding functions (OpenAI, Ollama, Cohere, Vertex) are never called: every collection refuses to embed (TestEgressStoreNeverEmbedsThroughTheNetwork)",
	"github.com/jackc/pgx/v5/pgconn":                   "the configured PostgreSQL server",
	"github.com/jackc/pgx/v5/pgconn/internal/bgreader": "reads pgconn's connection",
	"github.com/jackc/pgx/v5/pgtype":                   "net.IP and net.IPNet values of inet columns; no connection",
	"github.com/google/uuid":                           "net.Interfaces for a node ID; no connection",
	"github.com/mailru/easyjson/buffer":                "net.Buffers as a write vector; no connection",
	"github.com/spf13/pflag":                           "net.IP flag values; no connection",
	"golang.org/x/crypto/ssh":                          "ollama/auth parses a key with it; its client and server code is never called",
	"fyne.io/fyne/v2":                                  "LoadResourceFromURLString, never called",
	"fyne.io/fyne/v2/internal/repository":              "http(s) URIs of images and files: Clinsight shows no image or link from a URL (no Hyperlink, no Markdown but fixed text)",
	"github.com/godbus/dbus/v5":                        "the session's D-Bus (desktop portal, notifications) on this computer",
}

// goTool returns the go command: the one that runs the tests (go test puts
// its GOROOT's bin first in PATH).
func goTool(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to list the linked packages: %v", err)
	}
	return p
}

// TestEgressLinkedNetworkCode: the packages linked into clinsight (both
// builds) that can open a network connection are exactly those listed in
// networkCode, each with the reason it sends nothing elsewhere; a new
// dependency (or a new import in one) that could reach the network fails
// here until someone has read it and added it.
func TestEgressLinkedNetworkCode(t *testing.T) {
	seen := map[string]bool{}
	for _, tags := range []string{"", "nogui"} {
		cmd := exec.Command(goTool(t), "list", "-deps", "-tags", tags,
			"-f", `{{if not .Standard}}{{.ImportPath}}|{{join .Imports ","}}{{end}}`, "github.com/clinsight/clinsight")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
		out, err := cmd.Output()
		if err != nil {
			var stderr []byte
			if ee, ok := err.(*exec.ExitError); ok {
				stderr = ee.Stderr
			}
			t.Fatalf("go list (tags %q): %v\n%s", tags, err, stderr)
		}
		for line := range strings.Lines(string(out)) {
			pkg, imports, _ := strings.Cut(strings.TrimSpace(line), "|")
			for imp := range strings.SplitSeq(imports, ",") {
				if imp == "net" || imp == "net/http" || strings.HasPrefix(imp, "net/http/") || imp == "net/smtp" || imp == "net/rpc" {
					seen[pkg] = true
					if _, ok := networkCode[pkg]; !ok {
						t.Errorf("%s (build tags %q) imports %s: read what it connects to and add it to networkCode with the reason it sends nothing elsewhere", pkg, tags, imp)
					}
				}
			}
		}
	}
	var stale []string
	for pkg := range networkCode {
		if !seen[pkg] {
			stale = append(stale, pkg)
		}
	}
	slices.Sort(stale)
	if len(stale) > 0 {
		t.Errorf("networkCode lists packages that no longer import net: %v", stale)
	}
}
