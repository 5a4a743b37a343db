package trials

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/clinsight/clinsight/vectorstore"
	"golang.org/x/sync/errgroup"
	"gonum.org/v1/gonum/blas/blas32"
)

// ItemIndex stores the embedding of every condition and intervention of
// every trial, one document each. [*vectorstore.Collection] implements it.
type ItemIndex interface {
	// Embedding returns a stored item's (normalised) vector, which the
	// caller does not modify. It is called from several goroutines at once.
	Embedding(id string) ([]float32, bool)
	// Add embeds and stores items, in batches.
	Add(ctx context.Context, docs []vectorstore.Document) error
}

// Item kinds of [trialItem].
const (
	itemCondition    = "condition"
	itemIntervention = "intervention"
	itemText         = "text"
)

// trialItem is a condition or intervention of a trial, as embedded for
// STS. A trial without either is represented by its title, or else by the
// first sentences of its summary (corpora such as BIRCO carry free text
// only).
type trialItem struct {
	id, text, kind string
}

// maxTextItems is how many summary sentences stand in for the items of a
// trial without conditions, interventions or title.
const maxTextItems = 3

// trialItems lists a trial's STS items. The id includes a hash of the text,
// so a re-imported trial whose conditions changed gets new vectors.
func trialItems(t *Trial) []trialItem {
	var out []trialItem
	add := func(text, kind string) {
		text = strings.TrimSpace(text)
		if text == "" {
			return
		}
		out = append(out, trialItem{id: itemID(t.ID, len(out), text), text: text, kind: kind})
	}
	for _, c := range t.Conditions {
		add(c, itemCondition)
	}
	for _, iv := range t.Interventions {
		add(iv, itemIntervention)
	}
	if len(out) > 0 {
		return out
	}
	if t.Title != "" {
		add(t.Title, itemText)
		return out
	}
	for i, s := range sentences(strings.TrimSpace(t.Summary + "\n" + t.Description)) {
		if i == maxTextItems {
			break
		}
		add(s, itemText)
	}
	return out
}

// itemID is the vector store ID of a trial's i-th item:
// "TRIAL|i|fnv32a(text) in 8 hex digits". Written without fmt: a match
// makes about 7,000 of them.
func itemID(trial string, i int, text string) string {
	h := uint32(2166136261) // FNV-1a, as hash/fnv's New32a
	for j := 0; j < len(text); j++ {
		h ^= uint32(text[j])
		h *= 16777619
	}
	const hexDigits = "0123456789abcdef"
	b := make([]byte, 0, len(trial)+24)
	b = append(b, trial...)
	b = append(b, '|')
	b = strconv.AppendInt(b, int64(i), 10)
	b = append(b, '|')
	for shift := 28; shift >= 0; shift -= 4 {
		b = append(b, hexDigits[h>>uint(shift)&0xf])
	}
	return string(b)
}

// itemVectors returns the items of each trial of ts (as trialItems lists
// them) and their vectors, both in the order of ts, embedding and storing
// the missing ones first. The trials are split over workers() goroutines:
// at 2,000 candidates this was 12 ms of a 54 ms match done on one.
func itemVectors(ctx context.Context, idx ItemIndex, ts []*Trial) ([][][]float32, [][]trialItem, error) {
	items := make([][]trialItem, len(ts))
	vecs := make([][][]float32, len(ts))
	lookup := func(each func(i int) []vectorstore.Document) []vectorstore.Document {
		nw := workers()
		missing := make([][]vectorstore.Document, nw)
		var g errgroup.Group
		for w := range nw {
			g.Go(func() error {
				for i := w; i < len(ts); i += nw {
					missing[w] = append(missing[w], each(i)...)
				}
				return nil
			})
		}
		_ = g.Wait() // the workers return no error
		return slices.Concat(missing...)
	}
	// find fills vecs[i] with the vectors of trial i's items that the
	// index holds and returns the others.
	find := func(i int) []vectorstore.Document {
		var missing []vectorstore.Document
		vecs[i] = make([][]float32, len(items[i]))
		for j, it := range items[i] {
			v, ok := idx.Embedding(it.id)
			if !ok {
				missing = append(missing, vectorstore.Document{ID: it.id, Text: it.text, Metadata: map[string]string{"trial": ts[i].ID, "kind": it.kind}})
			}
			vecs[i][j] = v
		}
		return missing
	}
	missing := lookup(func(i int) []vectorstore.Document {
		items[i] = trialItems(ts[i])
		return find(i)
	})
	if len(missing) == 0 {
		return vecs, items, nil
	}
	if err := idx.Add(ctx, missing); err != nil {
		return nil, nil, fmt.Errorf("embed %d trial conditions and interventions: %w", len(missing), err)
	}
	if still := lookup(find); len(still) > 0 {
		d := still[0]
		return nil, nil, fmt.Errorf("item %q of trial %s is missing from the vector store after embedding", d.Text, d.Metadata["trial"])
	}
	return vecs, items, nil
}

// stsScores computes the IBM STS measures of one trial:
//
//	STS1 = Σᵢ w_i^P · maxⱼ cos(Pᵢ, Tⱼ)          over the patient concepts Pᵢ
//	STS2 = (1/|T|) Σᵢ w_i^T · maxⱼ cos(Tᵢ, Pⱼ)  over the trial items Tᵢ
//
// p are the patient concept vectors with weights pw; t the trial item
// vectors with weights tw. Vectors are unit length, so cos is the dot
// product. A trial without items scores 0 on both.
func stsScores(p [][]float32, pw []float64, t [][]float32, tw []float64) (sts1, sts2 float64) {
	if len(t) == 0 || len(p) == 0 {
		return 0, 0
	}
	// sim[i][j] = cos(Pi, Tj)
	best2 := make([]float64, len(t))
	for j := range best2 {
		best2[j] = math.Inf(-1)
	}
	for i, pv := range p {
		best1 := math.Inf(-1)
		for j, tv := range t {
			c := dot(pv, tv)
			best1 = max(best1, c)
			best2[j] = max(best2[j], c)
		}
		sts1 += pw[i] * best1
	}
	for j := range t {
		sts2 += tw[j] * best2[j]
	}
	sts2 /= float64(len(t))
	return sts1, sts2
}

// dot is the dot product of a and b over their common length, with gonum's
// SIMD kernel (blas32.Dot): STS computes about 70,000 of them per match
// at 2,000 candidates.
func dot(a, b []float32) float64 {
	n := min(len(a), len(b))
	if n == 0 {
		return 0
	}
	return float64(blas32.Dot(blas32.Vector{N: n, Inc: 1, Data: a[:n]}, blas32.Vector{N: n, Inc: 1, Data: b[:n]}))
}

// normalize returns v scaled to unit length (a zero vector stays zero).
func normalize(v []float32) []float32 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	if s == 0 {
		return v
	}
	n := float32(1 / math.Sqrt(s))
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = x * n
	}
	return out
}

// IndexItems embeds the conditions and interventions of every trial that
// the pipeline's item index does not hold yet (see [IndexItems]).
func (p *Pipeline) IndexItems(ctx context.Context, progress func(done, total int)) (int, error) {
	return IndexItems(ctx, p.db, p.items, progress)
}

// IndexItems embeds the conditions and interventions of every trial of db
// that the item index does not hold yet, in batches, reporting progress
// (items done of items missing). Matching does this lazily for its
// candidates; call it after an import to pay the cost once.
func IndexItems(ctx context.Context, db *sql.DB, idx ItemIndex, progress func(done, total int)) (int, error) {
	rows, err := db.QueryContext(ctx, `SELECT `+trialColumns+` FROM trials ORDER BY doc`)
	if err != nil {
		return 0, fmt.Errorf("index trial items: %w", err)
	}
	var missing []vectorstore.Document
	for rows.Next() {
		_, t, err := scanTrial(rows)
		if err != nil {
			rows.Close()
			return 0, fmt.Errorf("index trial items: %w", err)
		}
		for _, it := range trialItems(&t) {
			if _, ok := idx.Embedding(it.id); !ok {
				missing = append(missing, vectorstore.Document{ID: it.id, Text: it.text, Metadata: map[string]string{"trial": t.ID, "kind": it.kind}})
			}
		}
	}
	err = rows.Err()
	rows.Close()
	if err != nil {
		return 0, fmt.Errorf("index trial items: %w", err)
	}
	const chunk = 20000 // each Add rewrites the collection file once
	for start := 0; start < len(missing); start += chunk {
		if progress != nil {
			progress(start, len(missing))
		}
		if err := idx.Add(ctx, missing[start:min(start+chunk, len(missing))]); err != nil {
			return start, fmt.Errorf("index trial items: %w", err)
		}
	}
	if progress != nil {
		progress(len(missing), len(missing))
	}
	return len(missing), nil
}
