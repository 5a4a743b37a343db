package app

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"

	"github.com/clinsight/clinsight/localllm"
	"github.com/clinsight/clinsight/vectorstore"
)

// EmbedderChoice is the embedder retrieval uses, and why. Pipelines record
// Label in their provenance; the UI shows it, so a result built on the
// lexical fallback is never mistaken for one built on a model.
type EmbedderChoice struct {
	// Embedder embeds texts; it is the configured embedding model when the
	// server has it, the lexical fallback otherwise.
	Embedder vectorstore.Embedder
	// Lexical is true for the fallback.
	Lexical bool
	// Label describes the choice for people, e.g.
	// "nomic-embed-text (Ollama)" or "lexical fallback (hashed TF-IDF): …".
	Label string
}

// ChooseEmbedder picks the configured embedding model when the Ollama
// server is reachable and has it, and the lexical fallback embedder
// (hashed bag of words, no model needed) otherwise. Never an error: the
// reason for a fallback is in the label.
func (ws *Workspace) ChooseEmbedder(ctx context.Context, usage *localllm.UsageCounter) EmbedderChoice {
	client, err := ws.ModelClient()
	if err != nil {
		return lexicalChoice(err.Error())
	}
	st := ws.Status(ctx, client)
	label, ok := st.EmbeddingModel()
	if !ok {
		return lexicalChoice(label)
	}
	return EmbedderChoice{Embedder: client.Embedder(ws.Config().Models.Embedding, localllm.Options{}, usage), Label: label}
}

// lexicalFallbackLabel prefixes the label of the fallback embedder.
// It says in plain words what is used and what would be better, wherever
// the label is shown (the Cohort and Trials screens, exports' provenance,
// the command line).
const lexicalFallbackLabel = "lexical fallback: word matching only — install an embedding model for meaning-based matching"

func lexicalChoice(reason string) EmbedderChoice {
	return EmbedderChoice{
		Embedder: vectorstore.NewLexicalEmbedder(vectorstore.DefaultLexicalDim),
		Lexical:  true,
		Label:    lexicalFallbackLabel + ": " + reason,
	}
}

// EmbeddingModel tells whether retrieval can use the configured embedding
// model: ok with the model's label, or not ok with the reason for the
// lexical fallback.
func (st Status) EmbeddingModel() (label string, ok bool) {
	if !st.Health.Reachable {
		return "Ollama is not reachable", false
	}
	for _, t := range st.Tasks {
		if t.Task == "embeddings" {
			if !t.Installed {
				return fmt.Sprintf("model %s is not installed", t.Model), false
			}
			return t.Model + " (Ollama)", true
		}
	}
	return "no embedding model is configured", false
}

// EmbeddingNote describes for people which embedder retrieval will use.
func (st Status) EmbeddingNote() string {
	label, ok := st.EmbeddingModel()
	if ok {
		return "Retrieval embeddings: " + label
	}
	return "Retrieval: word matching only — install an embedding model for meaning-based matching (" + label + ")"
}

// vectorStores opens the workspace's vector store once.
type vectorStores struct {
	once  sync.Once
	store *vectorstore.Store
	err   error
}

// VectorStore returns the workspace's vector store (the vectors/
// directory), opening it on first use. It holds only vectors computed from
// the workspace's data, so a damaged collection file is kept aside and built
// again on first use, with a warning (see OnWarning) and a log entry.
func (ws *Workspace) VectorStore() (*vectorstore.Store, error) {
	ws.vectors.once.Do(func() {
		ws.vectors.store, ws.vectors.err = vectorstore.Open(ws.VectorsDir(), vectorstore.Options{OnCorrupt: ws.vectorFileCorrupt})
		if ws.vectors.err != nil {
			ws.vectors.err = fmt.Errorf("open the vector store in %s: %w", ws.VectorsDir(), ws.vectors.err)
		}
	})
	return ws.vectors.store, ws.vectors.err
}

// vectorFileCorrupt tells the user that a search index file was damaged and
// is being rebuilt.
func (ws *Workspace) vectorFileCorrupt(e vectorstore.CorruptEvent) {
	cause := e.Err
	var fe *vectorstore.FileError
	if errors.As(e.Err, &fe) {
		cause = fe.Err
	}
	ws.logger.Warn("damaged vector collection file kept aside; it is rebuilt on first use",
		"path", e.Path, "backup", e.Backup, "err", e.Err)
	ws.warn(fmt.Sprintf("The search index file %s was damaged (%v). It was kept as %s and the index is being rebuilt from the data, which takes a moment; no data was lost.",
		e.Path, cause, filepath.Base(e.Backup)))
}
