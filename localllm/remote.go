package localllm

import (
	"context"
	"errors"
	"fmt"

	"github.com/ollama/ollama/api"
)

// checkRunsHere refuses a model that the server does not run itself but
// forwards to another host: a remote ("cloud") model, such as one that
// `ollama pull gpt-oss:120b-cloud` installs, whose every chat request
// Ollama relays, prompt included, to ollama.com (or the model's
// remote_host). The server says so in the model's details (/api/show),
// which are asked once per model and client; nothing else is sent before.
// When they cannot be had, nothing is sent (the error says why), except for
// a model Ollama says it does not have. op names the call for messages.
func (c *Client) checkRunsHere(ctx context.Context, op, model string) error {
	if _, ok := c.runsHere.Load(model); ok {
		return nil
	}
	resp, err := c.api.Show(c.bound(ctx, c.infoBounds(op)), &api.ShowRequest{Model: model})
	if err != nil {
		var se api.StatusError
		if errors.As(err, &se) && modelNotFound().MatchString(se.ErrorMessage) {
			// Ollama's own answer for a model it does not have, which it
			// cannot forward: the request itself gets (and reports) the
			// same answer. Any other failure (a server that is not
			// Ollama's included) sends nothing.
			return nil
		}
		return c.translate(ctx, call{op: op, model: model}, err)
	}
	if resp.RemoteHost != "" || resp.RemoteModel != "" {
		where := resp.RemoteHost
		if where == "" {
			where = "another server"
		}
		return c.translate(ctx, call{op: op, model: model}, &Error{Kind: Refused, Message: fmt.Sprintf(
			"the model %s is not run by the model server at %s: the server forwards every request for it to %s (a cloud model), so questions and clinical text would leave for that host. Clinsight does not use such models: choose one that runs on the model server itself in Settings",
			model, c.host, where)})
	}
	c.runsHere.Store(model, struct{}{})
	return nil
}
