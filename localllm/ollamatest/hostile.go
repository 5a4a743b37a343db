package ollamatest

import (
	"errors"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// RedirectAll makes the server answer every later request with a redirect
// (status, or 307 when 0) to target followed by the request's path: a
// proxy or a hostile server sending the client elsewhere. An empty target
// switches this off. The requests are still recorded.
func (s *Server) RedirectAll(target string, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.redirect, s.redirectStatus = target, status
}

// writeRedirect answers r with a redirect to target + r's path; status 0
// means 307 Temporary Redirect (which keeps the method and the body).
func writeRedirect(w http.ResponseWriter, r *http.Request, target string, status int) {
	if status < 300 || status > 399 {
		status = http.StatusTemporaryRedirect
	}
	w.Header().Set("Location", strings.TrimRight(target, "/")+r.URL.RequestURI())
	w.WriteHeader(status)
}

// Tripwire is a loopback address that must never be contacted: it counts
// every TCP connection made to it and closes it at once. Point a redirect at
// it to check that a client does not follow it.
type Tripwire struct {
	// URL is the tripwire's base URL, e.g. "http://127.0.0.1:40125".
	URL string

	l    net.Listener
	done chan struct{}

	mu      sync.Mutex
	conns   int
	markers map[string]chan struct{}
	remotes []string
}

// NewTripwire starts a tripwire and closes it when the test ends.
func NewTripwire(tb testing.TB) *Tripwire {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	t := &Tripwire{URL: "http://" + l.Addr().String(), l: l, done: make(chan struct{}), markers: map[string]chan struct{}{}}
	go t.accept()
	tb.Cleanup(func() {
		l.Close()
		<-t.done
	})
	return t
}

func (t *Tripwire) accept() {
	defer close(t.done)
	for {
		c, err := t.l.Accept()
		if err != nil {
			return
		}
		remote := c.RemoteAddr().String()
		t.mu.Lock()
		if m, ok := t.markers[remote]; ok {
			delete(t.markers, remote)
			close(m)
		} else {
			t.conns++
			t.remotes = append(t.remotes, remote)
		}
		t.mu.Unlock()
		c.Close()
	}
}

// Conns returns the number of connections made to the tripwire so far. It
// first makes a marker connection of its own and waits until the tripwire
// has accepted it: connections are accepted in the order they were
// established, so every earlier connection has been counted by then, even
// one that the kernel completed but the accept loop had not yet taken.
func (t *Tripwire) Conns(tb testing.TB) int {
	tb.Helper()
	c, err := net.Dial("tcp", t.l.Addr().String())
	if err != nil {
		tb.Fatalf("tripwire marker connection: %v", err)
	}
	defer c.Close()
	seen := make(chan struct{})
	local := c.LocalAddr().String()
	t.mu.Lock()
	if i := slices.Index(t.remotes, local); i >= 0 {
		// The accept loop took the marker before it was registered.
		t.remotes = slices.Delete(t.remotes, i, i+1)
		t.conns--
		close(seen)
	} else {
		t.markers[local] = seen
	}
	t.mu.Unlock()
	select {
	case <-seen:
	case <-time.After(30 * time.Second):
		tb.Fatal(errors.New("tripwire: the marker connection was not accepted within 30s"))
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.conns
}

// ProxyVariables returns every proxy variable net/http reads (HTTP_PROXY,
// HTTPS_PROXY, ALL_PROXY in both cases) set to proxy, and NO_PROXY empty:
// the environment of a machine whose every outgoing request would go
// through proxy (point it at a [Tripwire] to see whether one does).
func ProxyVariables(proxy string) []string {
	var env []string
	for _, k := range []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"} {
		env = append(env, k+"="+proxy)
	}
	return append(env, "NO_PROXY=", "no_proxy=")
}

// envChild names the test a child process started by [InChild] runs.
const envChild = "OLLAMATEST_CHILD"

// InChild runs the calling test again in a child process, with env added to
// its environment from the start (net/http reads the proxy variables once
// per process, so a test that sets them later may see an earlier reading).
// In the parent it waits for the child, fails the test with the child's
// output unless the child passed, and returns false; in the child it
// returns true, and the test goes on with its body.
func InChild(t *testing.T, env ...string) bool {
	t.Helper()
	if os.Getenv(envChild) == t.Name() {
		return true
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+regexp.QuoteMeta(t.Name())+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), append(env, envChild+"="+t.Name())...)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: "+t.Name()) {
		t.Fatalf("child process: %v\n%s", err, out)
	}
	return false
}
