package localllm_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/clinsight/clinsight/localllm"
	"github.com/clinsight/clinsight/localllm/ollamatest"
)

// clientOps are every call of the client that sends something to the
// server, by name.
func clientOps(t *testing.T) map[string]func(context.Context, *localllm.Client) error {
	ggufPath, _ := writeGGUF(t, 1<<20)
	req := localllm.ChatRequest{Model: chatModel, Messages: userMsg("Patient 10006 (F, 71) has sepsis; summarise.")}
	return map[string]func(context.Context, *localllm.Client) error{
		"health": func(ctx context.Context, c *localllm.Client) error { _, err := c.Health(ctx); return err },
		"list":   func(ctx context.Context, c *localllm.Client) error { _, err := c.Models(ctx); return err },
		"show":   func(ctx context.Context, c *localllm.Client) error { _, err := c.Show(ctx, chatModel); return err },
		"chat":   func(ctx context.Context, c *localllm.Client) error { _, err := c.Chat(ctx, req, nil); return err },
		"streaming chat": func(ctx context.Context, c *localllm.Client) error {
			_, err := c.Chat(ctx, req, func(string) {})
			return err
		},
		"JSON chat": func(ctx context.Context, c *localllm.Client) error {
			_, err := c.ChatJSON(ctx, req, localllm.MustParseSchema(`{"type":"object"}`), nil)
			return err
		},
		"embed": func(ctx context.Context, c *localllm.Client) error {
			_, _, err := c.Embed(ctx, embedModel, []string{"patient 10006 has sepsis"})
			return err
		},
		"pull":   func(ctx context.Context, c *localllm.Client) error { return c.Pull(ctx, chatModel, nil) },
		"import": func(ctx context.Context, c *localllm.Client) error { return c.Import(ctx, "usb:1b", ggufPath, nil) },
	}
}

// TestRedirectNeverFollowed: a server that answers with a redirect to
// another host gets an error naming both hosts, and the other host is never
// contacted (no TCP connection at all), for every call and redirect status.
func TestRedirectNeverFollowed(t *testing.T) {
	for _, status := range []int{http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
		http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		for name, op := range clientOps(t) {
			t.Run(fmt.Sprintf("%s/%d", name, status), func(t *testing.T) {
				tw := ollamatest.NewTripwire(t)
				s := newServer(t)
				s.RedirectAll(tw.URL, status)
				c := newClient(t, s, localllm.Config{})
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				err := op(ctx, c)
				e := wantKind(t, err, localllm.ServerDown)
				for _, want := range []string{s.URL, tw.URL, "redirect", "only talks to the configured host"} {
					if !strings.Contains(e.Message, want) {
						t.Errorf("message %q lacks %q", e.Message, want)
					}
				}
				if n := tw.Conns(t); n != 0 {
					t.Fatalf("the redirect target received %d connections", n)
				}
				if s.Count("", "/") == 0 {
					t.Error("the configured server received no request")
				}
			})
		}
	}
}

// TestRedirectWithoutLocation: a 3xx answer without a usable target (a 300
// or 304, or a relative Location) is refused too, not read as a reply.
func TestRedirectWithoutLocation(t *testing.T) {
	for _, status := range []int{http.StatusMultipleChoices, http.StatusNotModified, http.StatusUseProxy} {
		s := newServer(t)
		s.QueueFault("/", ollamatest.Fault{Status: status})
		c := newClient(t, s, localllm.Config{})
		_, err := c.Health(context.Background())
		e := wantKind(t, err, localllm.ServerDown)
		if !strings.Contains(e.Message, s.URL) || !strings.Contains(e.Message, fmt.Sprintf("HTTP %d", status)) {
			t.Errorf("status %d: message %q", status, e.Message)
		}
	}
	// A relative Location resolves against the configured host: the
	// message names the resolved target.
	s := newServer(t)
	s.QueueFault("/api/tags", ollamatest.Fault{Redirect: "/elsewhere"})
	c := newClient(t, s, localllm.Config{})
	_, err := c.Models(context.Background())
	e := wantKind(t, err, localllm.ServerDown)
	if !strings.Contains(e.Message, s.URL+"/elsewhere/api/tags") {
		t.Errorf("message %q", e.Message)
	}
}
