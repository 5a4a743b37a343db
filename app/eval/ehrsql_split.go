package eval

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// EHRSQLItem is one question of an EHRSQL 2024 split.
type EHRSQLItem struct {
	// ID is the question's identifier.
	ID string `json:"id"`
	// Question is the natural-language question.
	Question string `json:"question"`
	// GoldSQL is the gold query; "" for a question that must be abstained
	// on (label "null").
	GoldSQL string `json:"gold_sql,omitempty"`
	// GoldAnswer is the gold answer as a Python literal ("[['m']]"); "" when
	// the split has no answers.
	GoldAnswer string `json:"gold_answer,omitempty"`
	// Answerable is true when the question has gold SQL.
	Answerable bool `json:"answerable"`
	// Unrunnable is true for an answerable question whose gold answer
	// cannot be reproduced on the shipped demo database (it needs
	// chartevents, which the demo lacks), as flagged by <split>_flat.json.
	Unrunnable bool `json:"unrunnable,omitempty"`
}

// LoadEHRSQL reads a split ("valid", "test", ...) of the EHRSQL 2024 task
// from dir: <split>/data.json (questions), <split>/label.json (gold SQL or
// "null") and, when present, <split>/answer.json (gold answers) and
// <split>_flat.json (which answerable questions run on the shipped
// database). Items keep the order of data.json.
func LoadEHRSQL(dir, split string) ([]EHRSQLItem, error) {
	if split == "" {
		split = "valid"
	}
	var data struct {
		Data []struct {
			ID       string `json:"id"`
			Question string `json:"question"`
		} `json:"data"`
	}
	if err := readJSON(filepath.Join(dir, split, "data.json"), &data); err != nil {
		return nil, err
	}
	var labels map[string]string
	if err := readJSON(filepath.Join(dir, split, "label.json"), &labels); err != nil {
		return nil, err
	}
	answers := map[string]string{}
	if err := readJSON(filepath.Join(dir, split, "answer.json"), &answers); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	var flat []struct {
		ID         string `json:"id"`
		Answerable bool   `json:"answerable"`
		Executable bool   `json:"executable_on_shipped_db"`
	}
	if err := readJSON(filepath.Join(dir, split+"_flat.json"), &flat); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	unrunnable := map[string]bool{}
	for _, f := range flat {
		if f.Answerable && !f.Executable {
			unrunnable[f.ID] = true
		}
	}
	items := make([]EHRSQLItem, 0, len(data.Data))
	for _, d := range data.Data {
		label, ok := labels[d.ID]
		if !ok {
			return nil, fmt.Errorf("EHRSQL %s: question %s has no label in label.json", split, d.ID)
		}
		it := EHRSQLItem{ID: d.ID, Question: d.Question, GoldAnswer: answers[d.ID]}
		if label != "null" {
			it.GoldSQL, it.Answerable = label, true
			it.Unrunnable = unrunnable[d.ID]
		}
		items = append(items, it)
	}
	if len(items) == 0 {
		return nil, fmt.Errorf("EHRSQL %s in %s: no questions", split, dir)
	}
	return items, nil
}

// readJSON decodes a JSON file.
func readJSON(path string, v any) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("parse %s: %w", path, err)
	}
	return nil
}
