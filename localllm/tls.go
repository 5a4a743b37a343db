package localllm

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
)

// maxCABytes bounds a certificate authority bundle: a site's CA chain is a
// few kilobytes; the system bundle is about 200 KB.
const maxCABytes = 1 << 20

// loadCAPool reads a PEM bundle of certificate authorities. The error is
// written for the person who configured the file.
func loadCAPool(path string) (*x509.CertPool, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, invalid(err, "the certificate authority file %s could not be opened (%v): correct the CA file in Settings", path, errors.Unwrap(err))
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, maxCABytes+1))
	if err != nil {
		return nil, invalid(err, "the certificate authority file %s could not be read: %v", path, err)
	}
	if len(raw) > maxCABytes {
		return nil, invalid(nil, "the certificate authority file %s is larger than %d KB: it should hold only the certificates of your site's certificate authority (PEM)", path, maxCABytes>>10)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(raw) {
		return nil, invalid(nil, "the certificate authority file %s holds no PEM certificate (-----BEGIN CERTIFICATE-----): ask your site for its CA certificate in PEM form", path)
	}
	return pool, nil
}

// CheckCAFile checks that path is a readable PEM bundle of at least one
// certificate (at most 1 MB).
func CheckCAFile(path string) error {
	_, err := loadCAPool(path)
	return err
}

// tlsConfig is the TLS configuration of an https client: TLS 1.2 or later,
// and, when a CA bundle is configured, only that bundle's authorities
// (the system's are not trusted for this server then).
func tlsConfig(caFile string) (*tls.Config, error) {
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if caFile == "" {
		return tc, nil
	}
	pool, err := loadCAPool(caFile)
	if err != nil {
		return nil, err
	}
	tc.RootCAs = pool
	return tc, nil
}

// Secret is a credential (a bearer token). Every fmt verb, the log and
// JSON print it as "[redacted]"; only the transport reads its value.
type Secret string

const redacted = "[redacted]"

// Format prints "[redacted]" whatever the verb.
func (Secret) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, redacted) }

// LogValue keeps the value out of slog records.
func (Secret) LogValue() slog.Value { return slog.StringValue(redacted) }

// MarshalJSON keeps the value out of JSON.
func (Secret) MarshalJSON() ([]byte, error) { return []byte(`"` + redacted + `"`), nil }

// maxTokenBytes bounds a bearer token (JWTs of a few kilobytes included).
const maxTokenBytes = 8 << 10

// checkToken checks that a token can be sent in an Authorization header.
// Its error never contains the token.
func checkToken(s Secret) error {
	if len(s) > maxTokenBytes {
		return invalid(nil, "the access token is longer than %d KB: check that the token file or variable holds only the token", maxTokenBytes>>10)
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x21 || c > 0x7e {
			return invalid(nil, "the access token contains a space, a line break or a character that is not plain ASCII (at byte %d): check that the token file or variable holds only the token", i+1)
		}
	}
	return nil
}

// checkHostPolicy refuses, before anything is dialled, a host not on this
// computer reached over plain http (unless allowPlain) and a token sent
// over plain http to a host not on this computer.
func checkHostPolicy(base *url.URL, allowPlain bool, token Secret) error {
	if base.Scheme != "http" || IsLoopback(base) {
		return nil
	}
	if token != "" {
		return &Error{Kind: Refused, Message: fmt.Sprintf(
			"the model server %s is not on this computer and does not use https, so the access token would cross the network readable by anyone on it: use the server's https:// address, or remove the token in Settings",
			base)}
	}
	if allowPlain {
		return nil
	}
	return &Error{Kind: Refused, Message: fmt.Sprintf(
		"the model server %s is not on this computer and does not use https: what Clinsight sends it (questions, clinical text, result rows) would cross the network unencrypted. Use the server's https:// address (for example behind your site's reverse proxy), or allow plain http for this host in Settings only if the whole network path to it is inside your site and trusted (a dedicated link or VPN)",
		base)}
}

// bearerTransport adds "Authorization: Bearer <token>" to every request to
// the configured host (scheme and host:port), and to nothing else. Every
// other Authorization header, and the query string, are removed: with
// OLLAMA_AUTH set in the environment, the Ollama library signs each
// request with the user's ollama.com key (~/.ollama/id_ed25519) and adds
// the public key and signature as an Authorization header and a ts
// parameter, which would identify that account to the model server and let
// it replay the signature to ollama.com. Clinsight's own requests never
// have a query string.
type bearerTransport struct {
	base  http.RoundTripper
	host  *url.URL
	token Secret
}

// RoundTrip implements http.RoundTripper.
func (t bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	own := t.token != "" && r.URL.Scheme == t.host.Scheme && r.URL.Host == t.host.Host
	if !own && r.URL.RawQuery == "" && r.Header.Get("Authorization") == "" {
		return t.base.RoundTrip(r)
	}
	r2 := r.Clone(r.Context())
	r2.URL.RawQuery = ""
	r2.Header.Del("Authorization")
	if own {
		r2.Header.Set("Authorization", "Bearer "+string(t.token))
	}
	return t.base.RoundTrip(r2)
}
