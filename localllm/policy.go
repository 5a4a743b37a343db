package localllm

import (
	"net"
	"net/url"
	"strings"
)

// IsLoopback reports whether the host of base URL u (as [NormalizeHost]
// returns it) is this computer: "localhost", an address in 127.0.0.0/8 or
// ::1 (also written as an IPv4-mapped IPv6 address). It never looks a name
// up: any other name is not loopback, even one that resolves to 127.0.0.1.
func IsLoopback(u *url.URL) bool {
	if u == nil {
		return false
	}
	return isLoopbackHost(u.Hostname())
}

// isLoopbackHost is [IsLoopback] for a host name or address without port.
func isLoopbackHost(host string) bool {
	h := strings.ToLower(strings.TrimSuffix(strings.Trim(host, "[]"), "."))
	if h == "localhost" {
		return true
	}
	if i := strings.IndexByte(h, '%'); i >= 0 { // fe80::1%eth0: a zone is never loopback's
		return false
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}
