package trials

import (
	"context"
	"database/sql"
	"fmt"
)

// Sizes of the demo data.
const (
	DemoTrials   = 400
	DemoPatients = 120
)

// DemoData adds synthetic trials and patients to a database (the demo
// workspace's): DemoTrials trials in the trial tables (replacing any
// trials there) and DemoPatients patient descriptions in table
// trial_patients. Deterministic for a seed; never real records. Atomic.
func DemoData(ctx context.Context, db *sql.DB, seed uint64) error {
	if err := EnsureSchema(ctx, db); err != nil {
		return err
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("demo trials: %w", err)
	}
	defer tx.Rollback()
	for _, s := range []string{
		`DELETE FROM trials`, `DELETE FROM trial_criteria`,
		`INSERT INTO trials_fts(trials_fts) VALUES ('delete-all')`,
		`DROP TABLE IF EXISTS trial_patients`,
		`CREATE TABLE trial_patients (
			patient_id TEXT PRIMARY KEY,
			description TEXT NOT NULL,
			age INTEGER NOT NULL,
			sex TEXT NOT NULL,
			condition TEXT NOT NULL
		)`,
	} {
		if _, err := tx.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("demo trials: %w", err)
		}
	}
	w, err := newTrialWriter(ctx, tx)
	if err != nil {
		return err
	}
	defer w.close()
	for i := range DemoTrials {
		t := SyntheticTrial(seed, i)
		if _, err := w.put(ctx, &t); err != nil {
			return fmt.Errorf("demo trials: %s: %w", t.ID, err)
		}
	}
	ins, err := tx.PrepareContext(ctx, `INSERT INTO trial_patients VALUES (?, ?, ?, ?, ?)`)
	if err != nil {
		return fmt.Errorf("demo patients: %w", err)
	}
	defer ins.Close()
	for i := range DemoPatients {
		p := SyntheticPatientN(seed, i)
		if _, err := ins.ExecContext(ctx, p.ID, p.Description, p.Age, string(p.Sex), p.Condition); err != nil {
			return fmt.Errorf("demo patients: %w", err)
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO trials_fts(trials_fts) VALUES ('optimize')`); err != nil {
		return fmt.Errorf("demo trials: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("demo trials: %w", err)
	}
	return nil
}

// ListDemoPatients returns the demo patients of a database (none when it
// has no trial_patients table).
func ListDemoPatients(ctx context.Context, db *sql.DB) ([]SyntheticPatient, error) {
	var n int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'trial_patients'`).Scan(&n); err != nil {
		return nil, fmt.Errorf("demo patients: %w", err)
	}
	if n == 0 {
		return nil, nil
	}
	rows, err := db.QueryContext(ctx, `SELECT patient_id, description, age, sex, condition FROM trial_patients ORDER BY patient_id`)
	if err != nil {
		return nil, fmt.Errorf("demo patients: %w", err)
	}
	defer rows.Close()
	var out []SyntheticPatient
	for rows.Next() {
		var p SyntheticPatient
		var sex string
		if err := rows.Scan(&p.ID, &p.Description, &p.Age, &sex, &p.Condition); err != nil {
			return nil, fmt.Errorf("demo patients: %w", err)
		}
		p.Sex = Sex(sex)
		out = append(out, p)
	}
	return out, rows.Err()
}
