package evidence

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"testing"
	"time"
)

// fillAll sets every field reachable from v (settable) to a value that is
// not the zero value: two elements in every slice and map, a pointer to a
// filled value in every pointer, so that a copy that forgets a field or
// shares a container is seen.
func fillAll(t *testing.T, v reflect.Value, depth int) {
	t.Helper()
	if depth > 12 {
		t.Fatalf("type %s nests too deep to fill", v.Type())
	}
	if v.Type() == reflect.TypeFor[time.Time]() {
		v.Set(reflect.ValueOf(time.Date(2026, 11, 26, 17, 0, 0, 0, time.UTC)))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString("s" + fmt.Sprint(depth))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(depth + 1))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(depth + 1))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(float64(depth) + 0.5)
	case reflect.Pointer:
		n := reflect.New(v.Type().Elem())
		fillAll(t, n.Elem(), depth+1)
		v.Set(n)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fillAll(t, v.Field(i), depth+1)
			}
		}
	case reflect.Slice:
		n := reflect.MakeSlice(v.Type(), 2, 2)
		for i := range 2 {
			fillAll(t, n.Index(i), depth+1)
		}
		v.Set(n)
	case reflect.Map:
		n := reflect.MakeMap(v.Type())
		for i := range 2 {
			k := reflect.New(v.Type().Key()).Elem()
			fillAll(t, k, depth+1)
			if k.Kind() == reflect.String {
				k.SetString(k.String() + fmt.Sprint(i))
			}
			e := reflect.New(v.Type().Elem()).Elem()
			fillAll(t, e, depth+1)
			n.SetMapIndex(k, e)
		}
		v.Set(n)
	default:
		t.Fatalf("the project holds a %s (%s): teach Snapshot and this test how to copy it", v.Kind(), v.Type())
	}
}

// checkNothingShared fails the test where a and b (equal values of one
// type) share a map, a slice's elements or a pointed-to value.
func checkNothingShared(t *testing.T, a, b reflect.Value, path string) {
	t.Helper()
	switch a.Kind() {
	case reflect.Pointer:
		if a.IsNil() {
			return
		}
		if a.Pointer() == b.Pointer() {
			t.Errorf("%s: the snapshot shares the pointer", path)
			return
		}
		checkNothingShared(t, a.Elem(), b.Elem(), path)
	case reflect.Struct:
		for i := range a.NumField() {
			f := a.Type().Field(i)
			if !f.IsExported() {
				if a.Type() != reflect.TypeFor[time.Time]() && !(copier{plain: map[reflect.Type]bool{}}).isPlain(f.Type) {
					t.Errorf("%s.%s: an unexported field that Snapshot cannot copy", path, f.Name)
				}
				continue
			}
			checkNothingShared(t, a.Field(i), b.Field(i), path+"."+f.Name)
		}
	case reflect.Slice:
		if a.Len() == 0 {
			return
		}
		if a.Pointer() == b.Pointer() {
			t.Errorf("%s: the snapshot shares the slice's elements", path)
		}
		for i := range a.Len() {
			checkNothingShared(t, a.Index(i), b.Index(i), fmt.Sprintf("%s[%d]", path, i))
		}
	case reflect.Map:
		if a.IsNil() {
			return
		}
		if a.Pointer() == b.Pointer() {
			t.Errorf("%s: the snapshot shares the map", path)
		}
		for it := a.MapRange(); it.Next(); {
			checkNothingShared(t, it.Value(), b.MapIndex(it.Key()), fmt.Sprintf("%s[%v]", path, it.Key()))
		}
	}
}

func mustJSON(t *testing.T, p *Project) []byte {
	t.Helper()
	raw, err := json.MarshalIndent(p, "", "  ")
	mustDo(t, err)
	return raw
}

// TestSnapshotSharesNothing fills every field of a project, snapshots it,
// and checks that the snapshot is equal, encodes to the same bytes, and
// shares no map, slice or pointer with the project (a field added later
// that Snapshot shared would fail here).
func TestSnapshotSharesNothing(t *testing.T) {
	p := &Project{}
	fillAll(t, reflect.ValueOf(p).Elem(), 0)
	s := p.Snapshot()
	if !reflect.DeepEqual(p, s) {
		t.Fatal("the snapshot differs from the project")
	}
	if !bytes.Equal(mustJSON(t, p), mustJSON(t, s)) {
		t.Fatal("the snapshot encodes differently")
	}
	checkNothingShared(t, reflect.ValueOf(p), reflect.ValueOf(s), "Project")
}

// TestSnapshotKeepsNilAndEmpty: nil and empty containers stay what they
// were (JSON null and [] or {}), so the saved file is byte-identical.
func TestSnapshotKeepsNilAndEmpty(t *testing.T) {
	p := NewProject("p", "lit", PICO{Population: "adults"})
	p.Screening = []ScreenedStudy{{ID: "a", Verdicts: []Verdict{}}, {ID: "b"}, {ID: "c", Verdicts: []Verdict{Yes, No}}}
	p.Criteria = []Criterion{}
	p.Extractions = nil
	p.Fields = nil
	s := p.Snapshot()
	if !bytes.Equal(mustJSON(t, p), mustJSON(t, s)) {
		t.Fatalf("the snapshot encodes differently:\n%s\n%s", mustJSON(t, p), mustJSON(t, s))
	}
	if s.Screening[0].Verdicts == nil || s.Screening[1].Verdicts != nil || s.Criteria == nil || s.Extractions != nil {
		t.Errorf("nil and empty not kept: %#v", s.Screening)
	}
	// The verdicts of one study share one allocation: an append to one
	// must not write into the next.
	s.Screening[0].Verdicts = append(s.Screening[0].Verdicts, Uncertain)
	if !slices.Equal(s.Screening[2].Verdicts, []Verdict{Yes, No}) {
		t.Errorf("an append wrote into the next study's verdicts: %v", s.Screening[2].Verdicts)
	}
}

// TestSnapshotOfAnOldProjectSavesByteIdentical: the v1 project file and a
// project with every kind of content (reviewers, outcomes, full-text
// decisions) encode the same through a snapshot as before, and edits to
// the project after the snapshot leave the snapshot as it was.
func TestSnapshotOfAnOldProjectSavesByteIdentical(t *testing.T) {
	p, raw := readOldProject(t)
	s := p.Snapshot()
	checkSavedAgainUnchanged(t, s, raw)
	if !bytes.Equal(mustJSON(t, p), mustJSON(t, s)) {
		t.Fatal("the snapshot encodes differently from the project")
	}
	before := mustJSON(t, s)
	ids := p.Candidates()
	if len(ids) < 2 {
		t.Fatalf("the old project has %d candidates", len(ids))
	}
	mustDo(t, p.Decide(ids[0], false, "Wrong population"))
	mustDo(t, p.Decide(ids[1], true, ""))
	for id, st := range p.Studies {
		st.Title = "changed"
		p.Studies[id] = st
	}
	p.Search.IDs[0] = "changed"
	for i := range p.Screening {
		p.Screening[i].Verdicts = append(p.Screening[i].Verdicts[:0], Uncertain)
	}
	if !bytes.Equal(before, mustJSON(t, s)) {
		t.Error("an edit of the project after the snapshot changed the snapshot")
	}
}

// syntheticScreenedProject is syntheticCandidateProject with every
// candidate screened by the model against three criteria.
func syntheticScreenedProject(n int) *Project {
	p := syntheticCandidateProject(n)
	p.Criteria = []Criterion{{Text: "Adults", Weight: 1}, {Text: "Ablation", Weight: 1}, {Text: "Trial", Weight: 1}}
	p.Screening = make([]ScreenedStudy, 0, n)
	for i, id := range p.Search.IDs {
		p.Screening = append(p.Screening, ScreenedStudy{ID: id, Title: p.Studies[id].Title, Year: p.Studies[id].Year,
			Verdicts: []Verdict{Yes, No, Verdict([]string{"YES", "NO", "UNCERTAIN"}[i%3])}, Score: float64(n-i) / float64(n)})
	}
	return p
}

// TestSnapshotOfALargeProjectEncodesTheSame: a screened review of 10,000
// candidates encodes the same through Snapshot and through Clone.
func TestSnapshotOfALargeProjectEncodesTheSame(t *testing.T) {
	p := syntheticScreenedProject(10_000)
	c, err := p.Clone()
	mustDo(t, err)
	want := mustJSON(t, p)
	if !bytes.Equal(want, mustJSON(t, p.Snapshot())) || !bytes.Equal(want, mustJSON(t, c)) {
		t.Fatal("Snapshot, Clone and the project encode differently")
	}
}

// BenchmarkProjectSnapshot compares the copy a review takes under its lock
// before saving (Snapshot) with Clone (JSON encoded and decoded), on
// screened reviews of 10,000, 50,000 and 100,000 candidates.
//
//	go test -tags ci ./app/evidence/ -run '^$' -bench ProjectSnapshot -benchtime 5x
func BenchmarkProjectSnapshot(b *testing.B) {
	for _, n := range []int{10_000, 50_000, MaxCandidates} {
		p := syntheticScreenedProject(n)
		b.Run(fmt.Sprintf("Snapshot/%d", n), func(b *testing.B) {
			for b.Loop() {
				runtime.KeepAlive(p.Snapshot())
			}
		})
		b.Run(fmt.Sprintf("Clone/%d", n), func(b *testing.B) {
			for b.Loop() {
				c, err := p.Clone()
				if err != nil {
					b.Fatal(err)
				}
				runtime.KeepAlive(c)
			}
		})
	}
}
