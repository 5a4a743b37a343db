package app

import (
	"github.com/clinsight/clinsight/localllm"
)

// HostPolicy is what the workspace allows for its model server (config.json
// "model_host_policy"): plain http to a server that is not on this
// computer, how to authenticate to a site's reverse proxy, which
// certificate authority to trust, and whether result rows may go to the
// model. It never holds a secret: a token is named by the file or the
// environment variable that holds it.
type HostPolicy struct {
	// AllowPlainHTTP is the one model server not on this computer that may
	// be reached over plain http (normalised, e.g. "http://10.1.2.3:11434");
	// empty allows none. It names the host, so that changing the host never
	// carries the permission over to another server.
	AllowPlainHTTP string `json:"allow_plain_http,omitempty"`
	// TokenFile is the absolute path of a file holding a bearer token sent
	// to the server (readable by its owner only, never by every user).
	TokenFile string `json:"token_file,omitempty"`
	// TokenEnv is the NAME of an environment variable holding a bearer
	// token (e.g. "CLINSIGHT_MODEL_TOKEN"), never the token itself.
	TokenEnv string `json:"token_env,omitempty"`
	// CAFile is the absolute path of a PEM bundle of the certificate
	// authorities trusted for an https server (a site's own CA); empty
	// trusts the system's.
	CAFile string `json:"ca_file,omitempty"`
	// SendRows says whether result rows may be sent to the model (for
	// example for the explanation of a cohort); nil means the default: on
	// for a server on this computer, off for any other.
	SendRows *bool `json:"send_rows,omitempty"`
}

// SendRowsToModel reports whether result rows (patient-level data) may be
// sent to the model server in use: the setting when it is made, otherwise
// on for a server on this computer and off for any other. A host that
// cannot be resolved sends nothing.
func (ws *Workspace) SendRowsToModel() bool {
	h, err := ws.ModelHost()
	if err != nil {
		return false
	}
	return sendRows(ws.Config().ModelHostPolicy, h.URL)
}

// sendRows is [Workspace.SendRowsToModel] for policy p and host URL host.
func sendRows(p HostPolicy, host string) bool {
	if p.SendRows != nil {
		return *p.SendRows
	}
	u, err := localllm.NormalizeHost(host)
	return err == nil && localllm.IsLoopback(u)
}
