package localllm

import (
	"context"
	"time"
)

// Chatter is what a pipeline needs to talk to a chat model. [*Client]
// implements it; tests substitute a [*Client] on an ollamatest server or a
// fake of their own.
type Chatter interface {
	// Chat sends the conversation and returns the model's reply; onDelta,
	// if not nil, receives the reply's text pieces in order as they are
	// generated. Errors are [*Error]s.
	Chat(ctx context.Context, req ChatRequest, onDelta func(delta string)) (ChatResult, error)
	// ChatJSON asks for a reply that conforms to schema, validates it,
	// retries a bounded number of times telling the model what was wrong,
	// and decodes the valid reply into out (if not nil). A reply that never
	// validates gives a [BadReply] [*Error] listing the problems.
	ChatJSON(ctx context.Context, req ChatRequest, schema *Schema, out any) (ChatResult, error)
}

// Embedder turns texts into vectors with one fixed model, so that a vector
// store can record which embedder built a collection. [*Client.Embedder]
// returns one.
type Embedder interface {
	// Embed returns one vector per text, in order, all of the same
	// dimension.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	// EmbedderName identifies the embedder, e.g. "ollama:nomic-embed-text".
	EmbedderName() string
}

// ModelManager is what the Settings screen needs: is the server up, which
// models are installed, and installing more (from the registry or from a
// GGUF file). [*Client] implements it.
type ModelManager interface {
	// Health checks that the server answers.
	Health(ctx context.Context) (Health, error)
	// Models lists the installed models.
	Models(ctx context.Context) ([]Model, error)
	// Pull downloads a model through the server, reporting progress.
	Pull(ctx context.Context, name string, progress func(Progress)) error
	// Import installs a local .gguf file as model name, reporting progress.
	Import(ctx context.Context, name, ggufPath string, progress func(Progress)) error
}

var (
	_ Chatter      = (*Client)(nil)
	_ ModelManager = (*Client)(nil)
	_ Embedder     = (*ModelEmbedder)(nil)
)

// Roles of a [Message].
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
)

// Message is one turn of a conversation.
type Message struct {
	// Role is RoleSystem, RoleUser or RoleAssistant.
	Role string
	// Content is the text.
	Content string
}

// Options are per-call model options. Nil pointers and zero values leave the
// server's (or the model's) default.
type Options struct {
	// Temperature controls randomness; 0 makes replies (nearly)
	// deterministic. Use new(0.0) for an explicit zero.
	Temperature *float64
	// Seed makes sampling reproducible.
	Seed *int
	// NumCtx is the context window in tokens. Ollama's default is small
	// (often 2048-4096); set it for long prompts.
	NumCtx int
	// NumPredict caps the number of generated tokens; a reply that reaches
	// it ends with done_reason "length".
	NumPredict int
	// KeepAlive is how long the server keeps the model loaded after the
	// call; 0 unloads it at once, a negative value keeps it indefinitely.
	KeepAlive *time.Duration
}

// apiOptions returns the options map of an Ollama request.
func (o Options) apiOptions() map[string]any {
	m := map[string]any{}
	if o.Temperature != nil {
		m["temperature"] = *o.Temperature
	}
	if o.Seed != nil {
		m["seed"] = *o.Seed
	}
	if o.NumCtx > 0 {
		m["num_ctx"] = o.NumCtx
	}
	if o.NumPredict != 0 {
		m["num_predict"] = o.NumPredict
	}
	if len(m) == 0 {
		return nil
	}
	return m
}

// ChatRequest is one chat call.
type ChatRequest struct {
	// Model is the model name, e.g. "llama3.1:8b".
	Model string
	// Messages is the conversation, oldest first.
	Messages []Message
	// Options are the model options for this call.
	Options Options
}

// Validate checks the request before it is sent.
func (r ChatRequest) Validate() error {
	if r.Model == "" {
		return invalid(nil, "no model is selected: choose one in Settings")
	}
	if len(r.Messages) == 0 {
		return invalid(nil, "the request to model %s has no messages", r.Model)
	}
	for i, m := range r.Messages {
		switch m.Role {
		case RoleSystem, RoleUser, RoleAssistant:
		default:
			return invalid(nil, "message %d of the request to model %s has role %q; use system, user or assistant", i+1, r.Model, m.Role)
		}
	}
	return nil
}

// ChatResult is a model's reply.
type ChatResult struct {
	// Content is the reply's text; for ChatJSON, the validated JSON.
	Content string
	// DoneReason is why generation stopped: "stop" (the model finished) or
	// "length" (num_predict or the context window was reached).
	DoneReason string
	// Attempts is the number of requests made (more than 1 when ChatJSON
	// retried).
	Attempts int
	// Usage sums all attempts.
	Usage Usage
}

// CutOff reports whether the reply was cut off (done_reason "length")
// rather than finished.
func (r ChatResult) CutOff() bool { return r.DoneReason == "length" }
