package localllm

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"unicode"
)

// DefaultHost is where a local Ollama server listens by default.
const DefaultHost = "http://127.0.0.1:11434"

// NormalizeHost turns the forms OLLAMA_HOST accepts into a base URL:
// "127.0.0.1:11434", ":11434" and "0.0.0.0:11434" (this computer),
// "localhost" (port 11434), "http://host:port", "https://host" (port 443)
// and "http://host" (port 80), with the ollama command's default ports. An
// empty string gives [DefaultHost]. Ollama's cloud host (ollama.com) is
// refused: Clinsight only talks to a server the site runs itself.
func NormalizeHost(s string) (*url.URL, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		s = DefaultHost
	}
	defaultPort := "11434"
	scheme, hostport, ok := strings.Cut(s, "://")
	switch {
	case !ok:
		scheme, hostport = "http", s
	case strings.EqualFold(scheme, "http"):
		scheme, defaultPort = "http", "80"
	case strings.EqualFold(scheme, "https"):
		scheme, defaultPort = "https", "443"
	default:
		return nil, fmt.Errorf("ollama host %q: scheme %q is not http or https", s, scheme)
	}
	hostport, path, _ := strings.Cut(hostport, "/")
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		// No port: a bare host or IP address (IPv6 in brackets or not).
		host, port = strings.Trim(hostport, "[]"), defaultPort
	}
	switch host {
	case "", "0.0.0.0":
		// ":11434" and a server's "listen everywhere" address mean this
		// computer to a client.
		host = "127.0.0.1"
	case "::":
		host = "::1"
	}
	if n, err := strconv.Atoi(port); err != nil || n <= 0 || n > 65535 {
		return nil, fmt.Errorf("ollama host %q: port %q is not a number between 1 and 65535", s, port)
	}
	if strings.ContainsAny(host, " /?#@") || strings.IndexFunc(host, unicode.IsControl) >= 0 {
		return nil, fmt.Errorf("ollama host %q: %q is not a host name", s, host)
	}
	lh := strings.ToLower(strings.TrimSuffix(host, "."))
	if lh == "ollama.com" || strings.HasSuffix(lh, ".ollama.com") || lh == "ollama.ai" || strings.HasSuffix(lh, ".ollama.ai") {
		return nil, fmt.Errorf("ollama host %q is Ollama's cloud service: Clinsight only talks to a local Ollama server", s)
	}
	u := &url.URL{Scheme: scheme, Host: net.JoinHostPort(host, port)}
	if path = strings.Trim(path, "/"); path != "" {
		u.Path = "/" + path
	}
	return u, nil
}
