package trials

import (
	"context"
	"database/sql"
	"fmt"
	"hash/fnv"
	"math"
	"strings"

	"github.com/clinsight/clinsight/vectorstore"
)

// ItemIndex stores the embedding of every condition and intervention of
// every trial, one document each. [*vectorstore.Collection] implements it.
type ItemIndex interface {
	// Get returns a stored item with its (normalised) vector.
	Get(id string) (vectorstore.Document, bool)
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
		h := fnv.New32a()
		h.Write([]byte(text))
		out = append(out, trialItem{id: fmt.Sprintf("%s|%d|%08x", t.ID, len(out), h.Sum32()), text: text, kind: kind})
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

// itemVectors returns the vectors of the trials' items (same order as
// trialItems), embedding and storing the missing ones first.
func itemVectors(ctx context.Context, idx ItemIndex, ts []*Trial) (map[string][][]float32, map[string][]trialItem, error) {
	var missing []vectorstore.Document
	all := map[string][]trialItem{}
	for _, t := range ts {
		items := trialItems(t)
		all[t.ID] = items
		for _, it := range items {
			if _, ok := idx.Get(it.id); !ok {
				missing = append(missing, vectorstore.Document{ID: it.id, Text: it.text, Metadata: map[string]string{"trial": t.ID, "kind": it.kind}})
			}
		}
	}
	if len(missing) > 0 {
		if err := idx.Add(ctx, missing); err != nil {
			return nil, nil, fmt.Errorf("embed %d trial conditions and interventions: %w", len(missing), err)
		}
	}
	out := make(map[string][][]float32, len(ts))
	for _, t := range ts {
		items := all[t.ID]
		vecs := make([][]float32, len(items))
		for i, it := range items {
			d, ok := idx.Get(it.id)
			if !ok {
				return nil, nil, fmt.Errorf("item %q of trial %s is missing from the vector store after embedding", it.text, t.ID)
			}
			vecs[i] = d.Embedding
		}
		out[t.ID] = vecs
	}
	return out, all, nil
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

func dot(a, b []float32) float64 {
	n := min(len(a), len(b))
	a, b = a[:n], b[:n]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= n; i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < n; i++ {
		s0 += a[i] * b[i]
	}
	return float64(s0 + s1 + s2 + s3)
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
			if _, ok := idx.Get(it.id); !ok {
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
