package evidence

import (
	"maps"
	"reflect"
	"slices"
	"time"
)

// Snapshot returns a copy of the project that shares nothing that can
// change with p (strings, which never change, are shared): what the copy
// holds stays as it is whatever is done to p afterwards, and the copy can
// be read (encoded, saved) on another goroutine while p is edited.
//
// It is the cheap copy a review takes under its lock before saving:
// about a hundredth of Clone's time for a review of MaxCandidates
// candidates (BenchmarkProjectSnapshot), as it copies containers instead
// of encoding and decoding JSON. The copy encodes to the same JSON as p.
func (p *Project) Snapshot() *Project {
	cp := new(Project)
	c := copier{plain: map[reflect.Type]bool{}}
	c.copy(reflect.ValueOf(cp).Elem(), reflect.ValueOf(p).Elem())
	return cp
}

// SnapshotReusing is Snapshot, except that the copy's candidates
// (Search), their descriptions (Studies) and the model's screening
// (Screening), the parts of a review that grow with its candidates and
// that screening decisions do not change, are prev's, shared: the caller
// guarantees that p's are equal to prev's (only decisions were made since
// prev, a Snapshot of p, was taken) and that nothing changes prev's.
// Copying the rest costs what the decisions do, so a review of
// MaxCandidates candidates saved while the reviewer screens is copied in
// milliseconds (BenchmarkProjectSnapshot).
func (p *Project) SnapshotReusing(prev *Project) *Project {
	rest := *p
	rest.Search, rest.Studies, rest.Screening = nil, nil, nil
	cp := rest.Snapshot()
	cp.Search, cp.Studies, cp.Screening = prev.Search, prev.Studies, prev.Screening
	return cp
}

// copier deep-copies values by reflection, remembering which types are
// plain: values that hold no map, slice, pointer, interface, channel or
// function (strings and time.Time are plain: neither can be changed in
// place), so that a copy of the value itself is a deep copy.
type copier struct {
	plain map[reflect.Type]bool
}

var timeType = reflect.TypeFor[time.Time]()

// isPlain says whether values of t are deep-copied by assignment.
func (c copier) isPlain(t reflect.Type) bool {
	if v, ok := c.plain[t]; ok {
		return v
	}
	c.plain[t] = false // a recursive type is not plain
	v := false
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128, reflect.String:
		v = true
	case reflect.Array:
		v = c.isPlain(t.Elem())
	case reflect.Struct:
		v = true
		if t != timeType {
			for i := range t.NumField() {
				if !c.isPlain(t.Field(i).Type) {
					v = false
					break
				}
			}
		}
	}
	c.plain[t] = v
	return v
}

// copy sets dst (settable, of src's type) to a deep copy of src. Nil maps,
// slices and pointers stay nil and empty ones empty, so the copy encodes
// to the same JSON. Unexported fields are copied by assignment (the
// project's types have none but time.Time's; TestSnapshotSharesNothing
// checks it).
func (c copier) copy(dst, src reflect.Value) {
	t := src.Type()
	if c.isPlain(t) {
		dst.Set(src)
		return
	}
	switch t.Kind() {
	case reflect.Pointer:
		if src.IsNil() {
			dst.SetZero()
			return
		}
		n := reflect.New(t.Elem())
		c.copy(n.Elem(), src.Elem())
		dst.Set(n)
	case reflect.Interface:
		if src.IsNil() {
			dst.SetZero()
			return
		}
		n := reflect.New(src.Elem().Type()).Elem()
		c.copy(n, src.Elem())
		dst.Set(n)
	case reflect.Struct:
		dst.Set(src)
		for i := range t.NumField() {
			if f := t.Field(i); f.IsExported() && !c.isPlain(f.Type) {
				c.copy(dst.Field(i), src.Field(i))
			}
		}
	case reflect.Array:
		for i := range src.Len() {
			c.copy(dst.Index(i), src.Index(i))
		}
	case reflect.Slice:
		c.copySlice(dst, src)
	case reflect.Map:
		c.copyMap(dst, src)
	default: // channels and functions are not data: shared
		dst.Set(src)
	}
}

func (c copier) copySlice(dst, src reflect.Value) {
	if src.IsNil() {
		dst.SetZero()
		return
	}
	if s, ok := src.Interface().([]ScreenedStudy); ok && c.screenedStudyFast() {
		dst.Set(reflect.ValueOf(cloneScreening(s)))
		return
	}
	t := src.Type()
	n := reflect.MakeSlice(t, src.Len(), src.Len())
	if c.isPlain(t.Elem()) {
		reflect.Copy(n, src)
	} else {
		for i := range src.Len() {
			c.copy(n.Index(i), src.Index(i))
		}
	}
	dst.Set(n)
}

// screenedStudyFast says whether cloneScreening deep-copies a
// ScreenedStudy: its Verdicts are its only field that is not plain.
func (c copier) screenedStudyFast() bool {
	t := reflect.TypeFor[ScreenedStudy]()
	for i := range t.NumField() {
		if f := t.Field(i); f.Name != "Verdicts" && !c.isPlain(f.Type) {
			return false
		}
	}
	return c.isPlain(reflect.TypeFor[Verdict]())
}

// cloneScreening copies the screening, every study's verdicts in one
// allocation (each capped, so an append to one never writes into the
// next).
func cloneScreening(s []ScreenedStudy) []ScreenedStudy {
	out := slices.Clone(s)
	total := 0
	for _, st := range s {
		total += len(st.Verdicts)
	}
	pool := make([]Verdict, 0, total)
	for i, st := range s {
		if st.Verdicts == nil {
			continue
		}
		start := len(pool)
		pool = append(pool, st.Verdicts...)
		out[i].Verdicts = pool[start:len(pool):len(pool)]
	}
	return out
}

func (c copier) copyMap(dst, src reflect.Value) {
	if src.IsNil() {
		dst.SetZero()
		return
	}
	t := src.Type()
	if c.isPlain(t.Key()) && c.isPlain(t.Elem()) {
		// The large maps of a review: copied whole, without reflection.
		switch m := src.Interface().(type) {
		case map[string]StudyInfo:
			dst.Set(reflect.ValueOf(maps.Clone(m)))
			return
		case map[string]Decision:
			dst.Set(reflect.ValueOf(maps.Clone(m)))
			return
		case map[string]string:
			dst.Set(reflect.ValueOf(maps.Clone(m)))
			return
		}
	}
	n := reflect.MakeMapWithSize(t, src.Len())
	k := reflect.New(t.Key()).Elem()
	v := reflect.New(t.Elem()).Elem()
	for it := src.MapRange(); it.Next(); {
		c.copy(k, it.Key())
		c.copy(v, it.Value())
		n.SetMapIndex(k, v)
	}
	dst.Set(n)
}
