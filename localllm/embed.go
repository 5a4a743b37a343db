package localllm

import (
	"context"
	"fmt"

	"github.com/ollama/ollama/api"
)

// EmbedRequest is one [Client.EmbedWith] call.
type EmbedRequest struct {
	// Model is the embedding model, e.g. "nomic-embed-text".
	Model string
	// Texts are embedded in order.
	Texts []string
	// Options: NumCtx and KeepAlive apply to embeddings.
	Options Options
	// BatchSize is the number of texts per request; 0 means the client's
	// EmbedBatchSize.
	BatchSize int
}

// Embed embeds texts with model through /api/embed, in batches of the
// client's EmbedBatchSize. See [Client.EmbedWith].
func (c *Client) Embed(ctx context.Context, model string, texts []string) ([][]float32, Usage, error) {
	return c.EmbedWith(ctx, EmbedRequest{Model: model, Texts: texts})
}

// EmbedWith embeds req.Texts in batches and returns one vector per text, in
// order. It checks that the server returns one vector per input and that
// all vectors have the same dimension ([BadReply] otherwise). Texts longer
// than the model's context are not truncated silently: they give a
// [ContextOverflow] error. Usage sums all batches.
func (c *Client) EmbedWith(ctx context.Context, req EmbedRequest) (_ [][]float32, _ Usage, err error) {
	cl := call{op: "embedding", model: req.Model, numCtx: req.Options.NumCtx}
	var usage Usage
	if req.Model == "" {
		return nil, usage, invalid(nil, "no embedding model is selected: choose one in Settings")
	}
	if len(req.Texts) == 0 {
		return nil, usage, nil
	}
	if err := c.checkRunsHere(ctx, "embedding", req.Model); err != nil {
		return nil, usage, err
	}
	requests := 0
	defer func() {
		n := 0
		for _, t := range req.Texts {
			n += len(t)
		}
		c.reportCall("embed", req.Model, n, requests, err)
	}()
	size := req.BatchSize
	if size <= 0 {
		size = c.batchSize
	}
	opts := req.Options.apiOptions()
	var keepAlive *api.Duration
	if ka := req.Options.KeepAlive; ka != nil {
		keepAlive = &api.Duration{Duration: *ka}
	}
	out := make([][]float32, 0, len(req.Texts))
	dim := 0
	for start := 0; start < len(req.Texts); start += size {
		if err := ctx.Err(); err != nil {
			return nil, usage, c.translate(ctx, cl, err)
		}
		batch := req.Texts[start:min(start+size, len(req.Texts))]
		wctx, watch := watchCall(ctx, c.workBounds("embedding", int64(len(batch))*maxEmbeddingBytes+replySlackBytes))
		requests++
		resp, err := c.api.Embed(wctx, &api.EmbedRequest{
			Model:     req.Model,
			Input:     batch,
			KeepAlive: keepAlive,
			Truncate:  new(false),
			Options:   opts,
		})
		if err != nil {
			return nil, usage, c.translate(ctx, cl, watch.explain(ctx, err))
		}
		usage = usage.Add(Usage{
			Model:         req.Model,
			Calls:         1,
			PromptTokens:  resp.PromptEvalCount,
			TotalDuration: resp.TotalDuration,
			LoadDuration:  resp.LoadDuration,
		})
		if len(resp.Embeddings) != len(batch) {
			return nil, usage, c.translate(ctx, cl, badReply(
				fmt.Errorf("%d embeddings for %d inputs", len(resp.Embeddings), len(batch)),
				"model %s returned %d embeddings for %d texts: check that it is an embedding model", req.Model, len(resp.Embeddings), len(batch)))
		}
		for i, v := range resp.Embeddings {
			if dim == 0 {
				dim = len(v)
			}
			if len(v) == 0 || len(v) != dim {
				return nil, usage, c.translate(ctx, cl, badReply(
					fmt.Errorf("embedding %d has dimension %d, expected %d", start+i, len(v), dim),
					"model %s returned embeddings of different sizes (%d and %d): check that it is an embedding model", req.Model, dim, len(v)))
			}
		}
		out = append(out, resp.Embeddings...)
	}
	c.log.Debug("ollama embed", "model", req.Model, "texts", len(req.Texts), "dimension", dim,
		"requests", usage.Calls, "prompt_tokens", usage.PromptTokens, "total", usage.TotalDuration)
	return out, usage, nil
}

// ModelEmbedder is an [Embedder] bound to one model of a [Client].
type ModelEmbedder struct {
	client *Client
	model  string
	opts   Options
	usage  *UsageCounter
}

// Embedder returns an [Embedder] that embeds with model and opts, adding
// each call's usage to usage (when not nil).
func (c *Client) Embedder(model string, opts Options, usage *UsageCounter) *ModelEmbedder {
	return &ModelEmbedder{client: c, model: model, opts: opts, usage: usage}
}

// Embed returns one vector per text, in order.
func (e *ModelEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	vecs, u, err := e.client.EmbedWith(ctx, EmbedRequest{Model: e.model, Texts: texts, Options: e.opts})
	if e.usage != nil && u.Calls > 0 {
		e.usage.Add(u)
	}
	return vecs, err
}

// EmbedderName returns "ollama:" followed by the model name.
func (e *ModelEmbedder) EmbedderName() string { return "ollama:" + e.model }

// Model returns the embedding model's name.
func (e *ModelEmbedder) Model() string { return e.model }
