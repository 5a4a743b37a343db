package localllm

import (
	"maps"
	"sync"
	"time"

	"github.com/ollama/ollama/api"
)

// Usage is what one or more model calls cost: how many calls, tokens and how
// much time, as Ollama reports it. Pipelines report it per task.
type Usage struct {
	// Model is the model that served the calls ("" when a sum covers
	// several models).
	Model string
	// Calls is the number of requests made to the server.
	Calls int
	// PromptTokens is the number of prompt tokens evaluated
	// (prompt_eval_count; tokens served from the server's cache are not
	// counted by Ollama).
	PromptTokens int
	// CompletionTokens is the number of tokens generated (eval_count).
	CompletionTokens int
	// TotalDuration is the server's total time for the calls.
	TotalDuration time.Duration
	// LoadDuration is the time spent loading the model.
	LoadDuration time.Duration
	// PromptEvalDuration is the time spent evaluating prompts.
	PromptEvalDuration time.Duration
	// EvalDuration is the time spent generating tokens.
	EvalDuration time.Duration
}

// Add returns the sum of u and v. The model is kept when both name the same
// one (or one of them is empty).
func (u Usage) Add(v Usage) Usage {
	s := Usage{
		Model:              u.Model,
		Calls:              u.Calls + v.Calls,
		PromptTokens:       u.PromptTokens + v.PromptTokens,
		CompletionTokens:   u.CompletionTokens + v.CompletionTokens,
		TotalDuration:      u.TotalDuration + v.TotalDuration,
		LoadDuration:       u.LoadDuration + v.LoadDuration,
		PromptEvalDuration: u.PromptEvalDuration + v.PromptEvalDuration,
		EvalDuration:       u.EvalDuration + v.EvalDuration,
	}
	switch {
	case u.Model == "" && u.Calls == 0:
		s.Model = v.Model
	case v.Model == "" && v.Calls == 0:
	case u.Model != v.Model:
		s.Model = ""
	}
	return s
}

// Tokens returns prompt plus completion tokens.
func (u Usage) Tokens() int { return u.PromptTokens + u.CompletionTokens }

// usageFromMetrics converts one response's metrics.
func usageFromMetrics(model string, m api.Metrics) Usage {
	return Usage{
		Model:              model,
		Calls:              1,
		PromptTokens:       m.PromptEvalCount,
		CompletionTokens:   m.EvalCount,
		TotalDuration:      m.TotalDuration,
		LoadDuration:       m.LoadDuration,
		PromptEvalDuration: m.PromptEvalDuration,
		EvalDuration:       m.EvalDuration,
	}
}

// UsageCounter accumulates [Usage] across calls, in total and per model. It
// is safe for concurrent use; the zero value is ready.
type UsageCounter struct {
	mu      sync.Mutex
	total   Usage
	byModel map[string]Usage
}

// Add adds one call's (or several calls') usage.
func (c *UsageCounter) Add(u Usage) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.total = c.total.Add(u)
	if c.byModel == nil {
		c.byModel = map[string]Usage{}
	}
	m := c.byModel[u.Model]
	if m.Model == "" {
		m.Model = u.Model
	}
	c.byModel[u.Model] = m.Add(u)
}

// Total returns the sum of everything added.
func (c *UsageCounter) Total() Usage {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total
}

// ByModel returns the sums per model name (a copy).
func (c *UsageCounter) ByModel() map[string]Usage {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.byModel)
}

// Reset clears the counter and returns what it held.
func (c *UsageCounter) Reset() Usage {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.total
	c.total, c.byModel = Usage{}, nil
	return t
}
