package localllm

import "testing"

// TestLoopbackLookalikes: host names and addresses that look like this
// computer but are not (or cannot be told without a lookup) are not
// trusted as loopback, and URLs that hide another host behind userinfo or
// a fragment are refused.
func TestLoopbackLookalikes(t *testing.T) {
	for host, want := range map[string]bool{
		"http://127.0.0.1:11434":            true,
		"http://localhost:11434":            true,
		"http://[::1]:11434":                true,
		"http://[::ffff:127.0.0.1]:11434":   true,
		"http://[::ffff:10.0.0.1]:11434":    false,
		"http://127.0.0.1.nip.io:11434":     false,
		"http://0x7f000001:11434":           false,
		"http://2130706433:11434":           false,
		"http://localhost.evil.com:11434":   false,
		"http://evil.com:11434":             false,
		"http://[fe80::1%25lo]:11434":       false,
		"http://127.1:11434":                false,
		"http://localhost%2eevil.com:11434": false,
	} {
		u, err := NormalizeHost(host)
		if err != nil {
			if want {
				t.Errorf("%s: %v", host, err)
			}
			continue
		}
		if got := IsLoopback(u); got != want {
			t.Errorf("IsLoopback(%s) = %v (host %q), want %v", host, got, u.Host, want)
		}
	}
	for _, host := range []string{
		"http://127.0.0.1@evil.com:11434",
		"http://localhost:11434@evil.com",
		"http://evil.com#@127.0.0.1:11434",
		"http://evil.com?@127.0.0.1",
	} {
		if u, err := NormalizeHost(host); err == nil && IsLoopback(u) {
			t.Errorf("%s taken for loopback (%s)", host, u)
		}
	}
}
