package vectorstore

import (
	"fmt"
	"maps"
)

// The vectors of a collection live in one contiguous row-major float32
// matrix, row i holding recs[i].vec: the record's vector, the chromem
// document's embedding and the row scanned by queries are the same memory,
// so a collection holds its vectors once.
//
// The matrix changes with the collection's state, always under writeMu:
//   - load: the matrix is the block the file's vectors were decoded into;
//   - Add of new IDs only, when the matrix has room left: the new vectors
//     are written into the rows past the end, which no query reads (queries
//     see the rows of the state they locked), and the state is swapped;
//   - any other change (an Add that replaces documents or outgrows the
//     room, Delete, a rebuild with another embedder): a new matrix is laid
//     out with room for a quarter more rows, new records alias its rows and
//     the chromem collection is rebuilt from them, then the state is
//     swapped.
// Rows are never written while a state that includes them can be read.

// roomFor returns the capacity, in rows, of a matrix laid out for n rows: a
// quarter more, so that adding documents a batch at a time copies the
// matrix O(log n) times, not at every batch. Untouched rows cost address
// space, not memory.
func roomFor(n int) int { return n + n/4 + 16 }

// source is where a row comes from: an existing record (its text and
// metadata, and its vector unless vec is set), or a new document with its
// vector.
type source struct {
	rec *record   // an existing record, or nil
	doc *Document // the new document when rec is nil
	vec []float32 // the row's vector if not rec's: normalised, or raw
	raw bool      // vec is to be normalised
}

// fill writes the row's vector into dst.
func (s source) fill(dst []float32) error {
	switch {
	case s.vec == nil:
		copy(dst, s.rec.vec)
	case s.raw:
		if err := normalizeInto(dst, s.vec); err != nil {
			return fmt.Errorf("document %q: %w", s.id(), err)
		}
	default:
		copy(dst, s.vec)
	}
	return nil
}

// record returns a new record for the row, its vector being row.
func (s source) record(row []float32) *record {
	if s.rec != nil {
		return &record{id: s.rec.id, text: s.rec.text, meta: s.rec.meta, vec: row}
	}
	return &record{id: s.doc.ID, text: s.doc.Text, meta: maps.Clone(s.doc.Metadata), vec: row}
}

// id returns the row's document ID.
func (s source) id() string {
	if s.rec != nil {
		return s.rec.id
	}
	return s.doc.ID
}

// layout builds a new matrix holding the rows, with room to grow, and
// returns it with the records of the rows, which alias its rows.
func layout(rows []source, dim int) ([]*record, []float32, error) {
	mat := make([]float32, len(rows)*dim, roomFor(len(rows))*dim)
	recs := make([]*record, len(rows))
	for i, s := range rows {
		row := mat[i*dim : (i+1)*dim : (i+1)*dim]
		if err := s.fill(row); err != nil {
			return nil, nil, err
		}
		recs[i] = s.record(row)
	}
	return recs, mat, nil
}
