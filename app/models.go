package app

import (
	"context"
	"time"

	"github.com/clinsight/clinsight/internal/progress"
	"github.com/clinsight/clinsight/localllm"
)

// ModelClient returns a client for the model server of this process (see
// [Workspace.ModelHost]: $OLLAMA_HOST, else the workspace settings, else
// the default) under the workspace's host policy (see [HostPolicy]): a
// server not on this computer must use https unless plain http is allowed
// for it (then a warning is given once), the access token and the site's
// CA are applied, and every model request is recorded in the audit trail.
// It does not contact the server.
func (ws *Workspace) ModelClient() (*localllm.Client, error) {
	h, err := ws.ModelHost()
	if err != nil {
		return nil, err
	}
	cfg, err := ws.clientConfig(h)
	if err != nil {
		return nil, err
	}
	c, err := localllm.New(cfg)
	if err != nil {
		return nil, err
	}
	ws.warnPlainHTTP(ws.HostState())
	return c, nil
}

// TaskModel is the model configured for one kind of task and whether the
// server has it.
type TaskModel struct {
	// Task names the task: "SQL generation", "chat", "embeddings".
	Task string
	// Model is the configured model name.
	Model string
	// Installed is true when the server lists the model; false when it does
	// not or when the server could not be asked.
	Installed bool
}

// Status summarises what Clinsight can use right now.
type Status struct {
	// Workspace is the workspace directory.
	Workspace string
	// Host is the model server in use and where it comes from (zero when
	// it could not be resolved; HealthError says why).
	Host ModelHost
	// Health is the Ollama server's state (Reachable false when down).
	Health localllm.Health
	// HealthError explains why the server could not be reached; nil when
	// it answered.
	HealthError error
	// Models lists the installed models (empty when the server is down).
	Models []localllm.Model
	// Tasks lists the configured model per task.
	Tasks []TaskModel
	// Sources are the registered data sources.
	Sources []Source
}

// statusTimeout bounds the whole status check, so a down or hanging server
// answers in seconds.
const statusTimeout = 5 * time.Second

// Status checks the Ollama server and lists the configured models and data
// sources. A server that is down is not an error: Status reports it, with
// an actionable message in HealthError.
func (ws *Workspace) Status(ctx context.Context, mm localllm.ModelManager) Status {
	return ws.status(ctx, mm, nil)
}

// CheckModels is [Workspace.Status] on the workspace's own model client: a
// host the policy refuses (or a token that cannot be read) is reported in
// HealthError, with the configured models and the data sources still
// listed.
func (ws *Workspace) CheckModels(ctx context.Context) Status {
	client, err := ws.ModelClient()
	if err != nil {
		return ws.status(ctx, nil, err)
	}
	return ws.status(ctx, client, nil)
}

// status is Status with mm, or, when mm is nil, with the error that
// prevented making a client.
func (ws *Workspace) status(ctx context.Context, mm localllm.ModelManager, clientErr error) Status {
	cfg := ws.Config()
	st := Status{Workspace: ws.dir, Sources: cfg.Sources}
	st.Host, _ = ws.ModelHost()
	ctx, cancel := context.WithTimeout(ctx, statusTimeout)
	defer cancel()
	if mm == nil {
		st.HealthError = clientErr
	} else {
		st.Health, st.HealthError = mm.Health(ctx)
	}
	if st.HealthError == nil {
		models, err := mm.Models(ctx)
		if err != nil {
			st.HealthError = err
		}
		st.Models = models
	}
	installed := map[string]bool{}
	for _, m := range st.Models {
		installed[m.Name] = true
	}
	for _, t := range []TaskModel{
		{Task: "SQL generation", Model: cfg.Models.SQL},
		{Task: "chat", Model: cfg.Models.Chat},
		{Task: "embeddings", Model: cfg.Models.Embedding},
	} {
		t.Installed = installed[t.Model] || installed[t.Model+":latest"]
		st.Tasks = append(st.Tasks, t)
	}
	return st
}

// TransferProgress converts a model transfer report (pull, import) into the
// progress type the CLI and the UI display.
func TransferProgress(p localllm.Progress) progress.Report {
	stage := p.Status
	if p.Digest != "" && len(p.Digest) > 19 {
		stage += " " + p.Digest[7:19]
	}
	return progress.Report{Stage: stage, Done: p.Completed, Total: p.Total, Unit: "bytes"}
}

// transferTo passes model transfer reports to f as progress reports.
func transferTo(f progress.Func) func(localllm.Progress) {
	return func(p localllm.Progress) { f.Send(TransferProgress(p)) }
}
