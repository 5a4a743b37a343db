package ollamatest

import (
	"encoding/pem"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"testing"
)

// NewTLS starts a server like [New] that speaks https with a self-signed
// certificate (for 127.0.0.1 and example.com) and closes it when the test
// ends. Clients trust it only with [Server.CertificatePEM] as their CA.
func NewTLS(tb testing.TB, models ...Model) *Server {
	tb.Helper()
	s := newServer(func(h http.Handler) *httptest.Server {
		srv := httptest.NewUnstartedServer(h)
		// A client that refuses the certificate is what the tests check,
		// not a server error worth logging.
		srv.Config.ErrorLog = log.New(io.Discard, "", 0)
		srv.StartTLS()
		return srv
	}, models...)
	tb.Cleanup(s.Close)
	return s
}

// CertificatePEM returns the certificate of a [NewTLS] server in PEM form
// (nil for a plain http server).
func (s *Server) CertificatePEM() []byte {
	c := s.srv.Certificate()
	if c == nil {
		return nil
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
}

// RequireToken makes the server answer 401 Unauthorized to every request
// without "Authorization: Bearer token", as a reverse proxy does; "" turns
// the check off.
func (s *Server) RequireToken(token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.token = token
}
