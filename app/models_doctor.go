package app

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/clinsight/clinsight/localllm"
)

// Recommended is the model recommended for one task, with what it costs to
// get and to run (figures from the Ollama library pages of these models,
// Q4_K_M quantisation).
type Recommended struct {
	// Task names the task as Status does.
	Task string
	// Model is the recommended model.
	Model string
	// Download is its download size, RAM the memory it needs to run.
	Download, RAM string
	// Capability is what the model must be able to do ("completion" or
	// "embedding").
	Capability string
}

// RecommendedModels lists the recommended model per task, in the order of
// Status.Tasks.
func RecommendedModels() []Recommended {
	return []Recommended{
		{Task: "SQL generation", Model: "qwen2.5-coder:7b", Download: "4.7 GB", RAM: "8 GB", Capability: "completion"},
		{Task: "chat", Model: "llama3.1:8b", Download: "4.9 GB", RAM: "8 GB", Capability: "completion"},
		{Task: "embeddings", Model: "nomic-embed-text", Download: "274 MB", RAM: "1 GB", Capability: "embedding"},
	}
}

// minContext is the smallest context length (tokens) a chat or SQL model
// needs: Clinsight's prompts (schema, examples, results) are budgeted to fit
// 4,096 tokens.
const minContext = 4096

// DoctorCheck is one item the model doctor checks.
type DoctorCheck struct {
	// Item is what was checked ("model server", "chat model llama3.1:8b").
	Item string
	// OK reports whether it is usable.
	OK bool
	// Detail says what was found.
	Detail string
	// Fix says what to do when it is not OK (each front end adds how: a
	// command, a button).
	Fix string
	// Pull is the model to install when that is the fix ("" otherwise).
	Pull string
}

// DoctorReport is the model doctor's finding.
type DoctorReport struct {
	// Host is the model server checked.
	Host ModelHost
	// Version is the server's version ("" when it was not reached).
	Version string
	// Checks are the items, in order: host, server, one per task.
	Checks []DoctorCheck
}

// OK reports whether everything is usable.
func (r DoctorReport) OK() bool {
	return !slices.ContainsFunc(r.Checks, func(c DoctorCheck) bool { return !c.OK })
}

// Missing lists the items that are not usable.
func (r DoctorReport) Missing() []DoctorCheck {
	var out []DoctorCheck
	for _, c := range r.Checks {
		if !c.OK {
			out = append(out, c)
		}
	}
	return out
}

// doctorTimeout bounds the whole check.
const doctorTimeout = 15 * time.Second

// Doctor checks what the model features need: a host the model host policy
// accepts, a server that answers, and for each task a configured model that
// is installed, can do the task (completion or embedding), has a context
// long enough and, for embeddings, a known dimension. It never fails: what
// it cannot check is reported as not OK with the reason.
func (ws *Workspace) Doctor(ctx context.Context) DoctorReport {
	ctx, cancel := context.WithTimeout(ctx, doctorTimeout)
	defer cancel()
	var rep DoctorReport
	h, err := ws.ModelHost()
	rep.Host = h
	hostCheck := DoctorCheck{Item: "model server address"}
	if err != nil {
		hostCheck.Detail, hostCheck.Fix = err.Error(), "correct the model server address in Settings"
		rep.Checks = append(rep.Checks, hostCheck)
		return rep
	}
	client, err := ws.ModelClient()
	if err != nil {
		hostCheck.Detail, hostCheck.Fix = err.Error(), "change the model server address, or its security settings, in Settings"
		rep.Checks = append(rep.Checks, hostCheck)
		return rep
	}
	hostCheck.OK, hostCheck.Detail = true, h.String()
	rep.Checks = append(rep.Checks, hostCheck)

	server := DoctorCheck{Item: "model server"}
	health, err := client.Health(ctx)
	if err != nil {
		server.Detail = err.Error()
		server.Fix = "start Ollama on this computer (or point Settings at your site's Ollama server)"
		rep.Checks = append(rep.Checks, server)
		for _, r := range RecommendedModels() {
			rep.Checks = append(rep.Checks, DoctorCheck{Item: r.Task + " model", Detail: "not checked: the model server is not reachable"})
		}
		return rep
	}
	rep.Version = health.Version
	server.OK, server.Detail = true, "Ollama "+health.Version+" at "+health.Host
	rep.Checks = append(rep.Checks, server)

	installed := map[string]bool{}
	if models, err := client.Models(ctx); err == nil {
		for _, m := range models {
			installed[m.Name] = true
		}
	}
	cfg := ws.Config().Models
	for _, r := range RecommendedModels() {
		name := map[string]string{"SQL generation": cfg.SQL, "chat": cfg.Chat, "embeddings": cfg.Embedding}[r.Task]
		rep.Checks = append(rep.Checks, checkTaskModel(ctx, client, r, name, installed))
	}
	return rep
}

// checkTaskModel checks the model configured for one task.
func checkTaskModel(ctx context.Context, client *localllm.Client, r Recommended, name string, installed map[string]bool) DoctorCheck {
	c := DoctorCheck{Item: fmt.Sprintf("%s model %s", r.Task, name)}
	if strings.TrimSpace(name) == "" {
		c.Item = r.Task + " model"
		c.Detail = "no model chosen for this task"
		c.Fix = fmt.Sprintf("choose one in Settings (recommended: %s, %s download, %s RAM)", r.Model, r.Download, r.RAM)
		return c
	}
	if !installed[name] && !installed[name+":latest"] {
		c.Detail = "not installed on the model server"
		c.Fix = fmt.Sprintf("install %s (%s download, needs about %s RAM)", name, sizeOf(name), ramOf(name))
		c.Pull = name
		return c
	}
	d, err := client.Show(ctx, name)
	if err != nil {
		c.Detail = "installed, but its details could not be read: " + err.Error()
		return c
	}
	if d.RemoteHost != "" {
		c.Detail = fmt.Sprintf("installed as a cloud model: the model server forwards its requests to %s, so Clinsight will not use it", d.RemoteHost)
		c.Fix = fmt.Sprintf("choose a model that runs on the model server itself in Settings (recommended: %s)", r.Model)
		return c
	}
	if len(d.Capabilities) > 0 && !slices.Contains(d.Capabilities, r.Capability) {
		c.Detail = fmt.Sprintf("installed, but it cannot do %s (it offers %s)", r.Capability, strings.Join(d.Capabilities, ", "))
		c.Fix = fmt.Sprintf("choose a model that can in Settings (recommended: %s)", r.Model)
		return c
	}
	switch r.Capability {
	case "embedding":
		if d.EmbeddingLength <= 0 {
			c.Detail = "installed, but the server does not report its embedding dimension"
			c.Fix = "re-install the model"
			return c
		}
		c.OK, c.Detail = true, fmt.Sprintf("installed; embeddings of %d dimensions", d.EmbeddingLength)
	default:
		if d.ContextLength > 0 && d.ContextLength < minContext {
			c.Detail = fmt.Sprintf("installed, but its context of %d tokens is shorter than the %d Clinsight's prompts need", d.ContextLength, minContext)
			c.Fix = fmt.Sprintf("choose a model with a longer context in Settings (recommended: %s)", r.Model)
			return c
		}
		c.OK, c.Detail = true, fmt.Sprintf("installed; context %d tokens", d.ContextLength)
	}
	return c
}

// sizeOf and ramOf give the download size and memory of a recommended
// model, or say they are unknown.
func sizeOf(name string) string {
	for _, r := range RecommendedModels() {
		if r.Model == name {
			return r.Download
		}
	}
	return "size unknown"
}

func ramOf(name string) string {
	for _, r := range RecommendedModels() {
		if r.Model == name {
			return r.RAM
		}
	}
	return "RAM unknown"
}
