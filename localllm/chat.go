package localllm

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/ollama/ollama/api"
)

// Chat sends the conversation to req.Model and returns the reply. When
// onDelta is not nil it receives the reply's text pieces in order, on the
// calling goroutine, as they arrive. The reply always streams on the wire,
// so that the client's bounds act while the model writes: a pause longer
// than the idle timeout, or more chunks or text than the reply budget
// (num_predict, else num_ctx, else the client's MaxReplyTokens) ends the
// call with an error. A reply cut off by the server at num_predict is
// returned without error with DoneReason "length" (see [ChatResult.CutOff]).
// Errors are [*Error]s: [ModelMissing], [ContextOverflow] (the prompt does
// not fit num_ctx), [ServerDown] (also when the connection is lost
// mid-reply), [Timeout], [Cancelled], [BadReply], [Server] or [Invalid].
func (c *Client) Chat(ctx context.Context, req ChatRequest, onDelta func(delta string)) (ChatResult, error) {
	if err := req.Validate(); err != nil {
		return ChatResult{}, err
	}
	return c.chatOnce(ctx, req, nil, onDelta)
}

// chatOnce makes one /api/chat request and reports it to Config.OnCall.
func (c *Client) chatOnce(ctx context.Context, req ChatRequest, format json.RawMessage, onDelta func(string)) (res ChatResult, err error) {
	if err := c.checkRunsHere(ctx, "chat", req.Model); err != nil {
		return ChatResult{}, err
	}
	defer func() {
		n := 0
		for _, m := range req.Messages {
			n += len(m.Content)
		}
		c.reportCall("chat", req.Model, n, 1, err)
	}()
	return c.chatRequest(ctx, req, format, onDelta)
}

// chatRequest makes one /api/chat request.
func (c *Client) chatRequest(ctx context.Context, req ChatRequest, format json.RawMessage, onDelta func(string)) (ChatResult, error) {
	cl := call{op: "chat", model: req.Model, numCtx: req.Options.NumCtx}
	lim := newChatLimits(c.replyBudget(req.Options))
	ar := &api.ChatRequest{
		Model:    req.Model,
		Messages: make([]api.Message, len(req.Messages)),
		Stream:   new(true),
		Format:   format,
		Options:  req.Options.apiOptions(),
		// Fail instead of silently dropping the start of the prompt or
		// of the reply when the context window is full.
		Truncate: new(false),
		Shift:    new(false),
	}
	for i, m := range req.Messages {
		ar.Messages[i] = api.Message{Role: m.Role, Content: m.Content}
	}
	if ka := req.Options.KeepAlive; ka != nil {
		ar.KeepAlive = &api.Duration{Duration: *ka}
	}

	wctx, watch := watchCall(ctx, c.workBounds("chat", lim.bodyBytes()))
	var text strings.Builder
	var final *api.ChatResponse
	chunks := 0
	err := c.api.Chat(wctx, ar, func(r api.ChatResponse) error {
		if err := ctx.Err(); err != nil {
			// Cancelled (perhaps by onDelta): ignore buffered lines.
			return err
		}
		if final != nil {
			return errors.New("the server sent more after its final message")
		}
		if chunks++; chunks > lim.maxChunks || text.Len()+len(r.Message.Content) > lim.maxText {
			return c.tooManyTokens(req.Model, lim)
		}
		if d := r.Message.Content; d != "" {
			text.WriteString(d)
			if onDelta != nil {
				onDelta(d)
			}
		}
		if r.Done {
			final = &r
		}
		return nil
	})
	switch {
	case err != nil && final == nil:
		// A partial last line and a lost connection or an exceeded
		// bound: that is the cause.
		err = watch.explain(ctx, err)
	case err == nil && final == nil:
		// The api client's stream reader hides transport errors: a
		// connection closed mid-reply ends the stream "normally".
		err = watch.incomplete(ctx, "reply from model "+req.Model)
	}
	if err == nil && ctx.Err() != nil {
		// The caller gave up, even if the reply happened to be complete.
		err = ctx.Err()
	}
	if err != nil {
		return ChatResult{}, c.translate(ctx, cl, err)
	}
	model := final.Model
	if model == "" {
		model = req.Model
	}
	res := ChatResult{
		Content:    text.String(),
		DoneReason: final.DoneReason,
		Attempts:   1,
		Usage:      usageFromMetrics(model, final.Metrics),
	}
	c.log.Debug("ollama chat", "model", model, "done_reason", res.DoneReason,
		"prompt_tokens", res.Usage.PromptTokens, "completion_tokens", res.Usage.CompletionTokens,
		"total", res.Usage.TotalDuration, "load", res.Usage.LoadDuration)
	if n := req.Options.NumCtx; n > 0 && res.Usage.PromptTokens >= n {
		return res, c.translate(ctx, cl, overflowError(req.Model, n, nil))
	}
	return res, nil
}
