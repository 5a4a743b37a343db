package localllm

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"

	"github.com/ollama/ollama/api"
)

// Progress reports the progress of [Client.Pull] and [Client.Import].
type Progress struct {
	// Status says what is happening, e.g. "pulling manifest", "hashing",
	// "uploading", "creating model", "success".
	Status string
	// Digest is the blob being transferred, if any.
	Digest string
	// Total is the number of bytes to transfer, 0 if unknown.
	Total int64
	// Completed is the number of bytes transferred so far.
	Completed int64
}

// Fraction returns Completed/Total, or 0 when Total is unknown.
func (p Progress) Fraction() float64 {
	if p.Total <= 0 {
		return 0
	}
	return float64(p.Completed) / float64(p.Total)
}

// Pull has the server download a model from its registry, reporting
// progress (if progress is not nil). On a computer without internet access
// it fails with a [Server] error that suggests [Client.Import].
func (c *Client) Pull(ctx context.Context, name string, progress func(Progress)) error {
	cl := call{op: "download", model: name}
	if name == "" {
		return invalid(nil, "no model name given")
	}
	wctx, watch := watchCall(ctx, c.workBounds("download", 0))
	var last string
	err := c.api.Pull(wctx, &api.PullRequest{Model: name}, func(p api.ProgressResponse) error {
		last = p.Status
		if progress != nil {
			progress(Progress{Status: p.Status, Digest: p.Digest, Total: p.Total, Completed: p.Completed})
		}
		return nil
	})
	if err == nil && last != "success" {
		err = watch.incomplete(ctx, "download of model "+name)
	}
	err = watch.explain(ctx, err)
	if err != nil {
		return c.modelTransferError(ctx, cl, err,
			"Ollama could not download model %s: %s. On a computer without internet access, copy the model's .gguf file and use Import in Settings")
	}
	c.log.Info("ollama model pulled", "model", name)
	return nil
}

// modelTransferError translates a Pull or Import failure: the server's own
// message is quoted in format (two %s: model, message) unless the server is
// down, the call was cancelled or timed out, or the reply was unusable.
func (c *Client) modelTransferError(ctx context.Context, cl call, err error, format string) error {
	e := c.classify(ctx, cl, err)
	switch e.Kind {
	case ServerDown, Cancelled, Timeout, Invalid, BadReply:
	default:
		msg := err.Error()
		var se api.StatusError
		if errors.As(err, &se) && se.ErrorMessage != "" {
			msg = se.ErrorMessage
		}
		e = &Error{Kind: Server, Message: fmt.Sprintf(format, cl.model, msg), Err: err}
	}
	return c.translate(ctx, cl, e)
}

// ImportRequest describes a GGUF file to install as a model.
type ImportRequest struct {
	// Name is the model name to create, e.g. "llama3.1:8b".
	Name string
	// Path is the .gguf file on this computer.
	Path string
	// Parameters are default options stored with the model, as in a
	// Modelfile's PARAMETER lines, e.g. {"num_ctx": 8192, "num_thread": 4}.
	Parameters map[string]any
	// Template overrides the chat template (Ollama otherwise takes it from
	// the GGUF file's tokenizer.chat_template when it knows it).
	Template string
	// System is a default system prompt stored with the model.
	System string
}

// Import installs a local .gguf file as model name (for sites without
// internet access: a model copied on a USB stick). See [Client.ImportGGUF].
func (c *Client) Import(ctx context.Context, name, ggufPath string, progress func(Progress)) error {
	return c.ImportGGUF(ctx, ImportRequest{Name: name, Path: ggufPath}, progress)
}

// ImportGGUF installs req.Path as model req.Name: it hashes the file
// (progress "hashing"), uploads it as a blob unless the server already has
// it (progress "uploading"), then creates the model from the blob, relaying
// the server's progress. A file that is not GGUF gives an [Invalid] error.
// progress is called by one goroutine at a time, but not always the
// caller's: during the upload the HTTP transport reads the file.
func (c *Client) ImportGGUF(ctx context.Context, req ImportRequest, progress func(Progress)) error {
	cl := call{op: "import", model: req.Name}
	if progress == nil {
		progress = func(Progress) {}
	}
	if req.Name == "" {
		return invalid(nil, "give the imported model a name")
	}
	f, err := os.Open(req.Path)
	if err != nil {
		return invalid(err, "cannot open the model file %s: %v", req.Path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return invalid(err, "%s is not a model file", req.Path)
	}
	magic := make([]byte, 4)
	if _, err := io.ReadFull(f, magic); err != nil || string(magic) != "GGUF" {
		return invalid(err, "%s is not a GGUF model file: Clinsight imports .gguf files (as Ollama and llama.cpp use them)", filepath.Base(req.Path))
	}

	// Hash.
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return invalid(err, "cannot read the model file %s: %v", req.Path, err)
	}
	h := sha256.New()
	if _, err := io.Copy(h, &progressReader{ctx: ctx, r: f, total: st.Size(), status: "hashing", report: progress}); err != nil {
		if ctx.Err() != nil {
			return c.translate(ctx, cl, ctx.Err())
		}
		return invalid(err, "cannot read the model file %s: %v", req.Path, err)
	}
	digest := "sha256:" + hex.EncodeToString(h.Sum(nil))

	// Upload unless present.
	present, err := c.hasBlob(ctx, digest)
	if err != nil {
		return c.translate(ctx, cl, err)
	}
	if !present {
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return invalid(err, "cannot read the model file %s: %v", req.Path, err)
		}
		body := &progressReader{ctx: ctx, r: f, total: st.Size(), digest: digest, status: "uploading", report: progress}
		wctx, watch := watchCall(ctx, c.workBounds("upload", maxInfoBytes))
		if err := c.api.CreateBlob(wctx, digest, body); err != nil {
			return c.modelTransferError(ctx, cl, watch.explain(ctx, err), "Ollama could not store the file for model %s: %s")
		}
		c.log.Info("ollama blob uploaded", "digest", digest, "bytes", st.Size())
	} else {
		progress(Progress{Status: "uploading", Digest: digest, Total: st.Size(), Completed: st.Size()})
	}

	// Create. Ollama may work on the file for a while between two progress
	// lines: a pause may last as long as the wait for the first one.
	b := c.workBounds("import", 0)
	b.idle = max(b.idle, b.header)
	wctx, watch := watchCall(ctx, b)
	var last string
	err = c.api.Create(wctx, &api.CreateRequest{
		Model:      req.Name,
		Files:      map[string]string{"model.gguf": digest},
		Parameters: req.Parameters,
		Template:   req.Template,
		System:     req.System,
	}, func(p api.ProgressResponse) error {
		last = p.Status
		progress(Progress{Status: p.Status, Digest: p.Digest, Total: p.Total, Completed: p.Completed})
		return nil
	})
	if err == nil && last != "success" {
		err = watch.incomplete(ctx, "import of model "+req.Name)
	}
	err = watch.explain(ctx, err)
	if err != nil {
		return c.modelTransferError(ctx, cl, err, "Ollama could not create model %s from the file: %s")
	}
	c.log.Info("ollama model imported", "model", req.Name, "digest", digest, "file", req.Path)
	return nil
}

// hasBlob asks the server whether it has a blob (HEAD /api/blobs/:digest;
// the api package has no call for it).
func (c *Client) hasBlob(ctx context.Context, digest string) (bool, error) {
	r, err := http.NewRequestWithContext(c.bound(ctx, c.infoBounds("blob check")), http.MethodHead, c.base.JoinPath("api", "blobs", digest).String(), nil)
	if err != nil {
		return false, err
	}
	resp, err := c.http.Do(r)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	switch resp.StatusCode {
	case http.StatusOK:
		return true, nil
	case http.StatusNotFound:
		return false, nil
	}
	return false, api.StatusError{StatusCode: resp.StatusCode, Status: resp.Status,
		ErrorMessage: "unexpected answer to the blob check"}
}

// progressReader reports bytes read and stops when ctx is done.
type progressReader struct {
	ctx    context.Context
	r      io.Reader
	total  int64
	done   int64
	digest string
	status string
	report func(Progress)
	last   int64
}

// Read implements io.Reader; it reports at most every 1 MiB and at the end.
func (p *progressReader) Read(b []byte) (int, error) {
	if err := p.ctx.Err(); err != nil {
		return 0, err
	}
	n, err := p.r.Read(b)
	p.done += int64(n)
	if p.done-p.last >= 1<<20 || (err == io.EOF && p.done != p.last) || p.done == p.total && p.done != p.last {
		p.last = p.done
		p.report(Progress{Status: p.status, Digest: p.digest, Total: p.total, Completed: p.done})
	}
	return n, err
}
