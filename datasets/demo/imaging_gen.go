package demo

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

// imagingGen generates dicom_all.
type imagingGen struct {
	w      *writer
	opts   Options
	r      *rand.Rand
	uidSeq int64
	// instances counts the rows written, one per instance.
	instances int64
}

func newImaging(w *writer, opts Options) *imagingGen {
	g := &imagingGen{w: w, opts: opts, r: newRand(opts.Seed, streamImaging)}
	g.uidSeq = 100_000_000_000 + g.r.Int64N(800_000_000_000)
	return g
}

// scaledPatients returns a collection's patient count for the options.
func (g *imagingGen) scaledPatients(c *collectionSpec) int {
	return max(2, int(math.Round(float64(c.patients)*float64(g.opts.Patients)/DefaultPatients)))
}

// run writes every collection, checking ctx between patients.
func (g *imagingGen) run(ctx context.Context) error {
	cs := collections()
	var total int64
	for i := range cs {
		total += int64(g.scaledPatients(&cs[i]))
	}
	report(g.opts.Progress, "imaging", 0, total, "patients")
	var done int64
	for i := range cs {
		c := &cs[i]
		stations := make([]string, len(c.scanners))
		for j, s := range c.scanners {
			stations[j] = g.stationName(s.modality)
		}
		num := between(g.r, 1, 50)
		for range g.scaledPatients(c) {
			if done%10 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
				report(g.opts.Progress, "imaging", done, total, "patients")
			}
			num += between(g.r, 1, 9)
			var id string
			if c.tss != nil {
				id = fmt.Sprintf(c.idPattern, pick(g.r, c.tss), num)
			} else {
				id = fmt.Sprintf(c.idPattern, num)
			}
			if err := g.patient(c, id, stations); err != nil {
				return err
			}
			done++
		}
	}
	report(g.opts.Progress, "imaging", total, total, "patients")
	return nil
}

// stationName makes up a device's StationName; derived objects have none.
func (g *imagingGen) stationName(modality string) string {
	var prefix string
	switch modality {
	case "CT", "CR", "US":
		prefix = modality
	case "MR":
		prefix = "MRC"
	case "PT":
		prefix = "PETCT"
	case "MG":
		prefix = "MAMMO"
	case "DX":
		prefix = "DXR"
	case "SM":
		prefix = "SS"
	default:
		return ""
	}
	return prefix + strconv.Itoa(between(g.r, 1000, 99999))
}

// uid returns a new unique UID under uidRoot: increasing numbers with
// random gaps, so that UIDs are unique without looking sequential.
func (g *imagingGen) uid() string {
	g.uidSeq += 1 + g.r.Int64N(999)
	return uidRoot + strconv.FormatInt(g.uidSeq, 10)
}

// ageString formats an age in days as a DICOM AS value.
func ageString(ageDays int) string {
	if ageDays < 2*365 {
		return fmt.Sprintf("%03dM", ageDays/30)
	}
	return fmt.Sprintf("%03dY", int(float64(ageDays)/365.25))
}

// patient writes the studies of one imaging patient.
func (g *imagingGen) patient(c *collectionSpec, patientID string, stations []string) error {
	r := g.r
	sex := "F"
	if chance(r, c.male) {
		sex = "M"
	} else if c.male > 0.05 && c.male < 0.95 && chance(r, 0.003) {
		sex = "O"
	}
	var ageDays int
	if chance(r, c.ageYoung) {
		ageDays = int(uniform(r, 13, 31) * 365.25)
	} else {
		ageDays = int(clamp(normal(r, c.ageMean, c.ageSD), float64(c.ageMin), float64(c.ageMax)+0.99) * 365.25)
	}
	ageKnown := !chance(r, c.ageMissing)
	site := siteSpec{}
	if len(c.sites) > 0 {
		site = pickWeighted(r, toChoices(c.sites))
	}
	// A patient is scanned on the same device per modality at their site.
	scanner := map[string]int{}
	scannerFor := func(modality string) int {
		if i, ok := scanner[modality]; ok {
			return i
		}
		var idx []int
		for i, s := range c.scanners {
			if s.modality == modality {
				idx = append(idx, i)
			}
		}
		i := -1
		if len(idx) > 0 {
			i = pick(r, idx)
		}
		scanner[modality] = i
		return i
	}

	first := time.Date(c.years[0], 1, 1, 0, 0, 0, 0, time.UTC)
	span := time.Date(c.years[1]+1, 1, 1, 0, 0, 0, 0, time.UTC).Sub(first)
	date := first.Add(days(float64(r.IntN(int(span.Hours() / 24)))))
	nStudies := between(r, c.studies[0], c.studies[1])
	elapsed := 0
	for s := range nStudies {
		if s > 0 && !c.sameDay {
			gap := between(r, 330, 400)
			date = date.AddDate(0, 0, gap)
			elapsed += gap
		}
		var age any
		if ageKnown {
			age = ageString(ageDays + elapsed)
		}
		st := pickWeighted(r, studyChoices(c.studyTypes))
		if err := g.study(c, &st, patientID, sex, age, date, site, stations, scannerFor); err != nil {
			return err
		}
	}
	return nil
}

// toChoices weighs sites.
func toChoices(sites []siteSpec) []choice[siteSpec] {
	cs := make([]choice[siteSpec], len(sites))
	for i, s := range sites {
		cs[i] = choice[siteSpec]{s, s.weight}
	}
	return cs
}

// studyChoices weighs study kinds.
func studyChoices(ss []studySpec) []choice[studySpec] {
	cs := make([]choice[studySpec], len(ss))
	for i, s := range ss {
		cs[i] = choice[studySpec]{s, s.weight}
	}
	return cs
}

// imageGeometry is what a derived object copies from its source series.
type imageGeometry struct {
	dims    [2]int
	spacing any
	thick   any
	count   int
}

// study writes the series of one study.
func (g *imagingGen) study(c *collectionSpec, st *studySpec, patientID, sex string, age any, date time.Time,
	site siteSpec, stations []string, scannerFor func(string) int) error {
	r := g.r
	studyUID := g.uid()
	var chosen []*seriesSpec
	for i := range st.series {
		if chance(r, st.series[i].prob) {
			chosen = append(chosen, &st.series[i])
		}
	}
	if len(chosen) == 0 {
		chosen = append(chosen, &st.series[0])
	}
	var source *imageGeometry
	for n, ss := range chosen {
		seriesUID := g.uid()
		count := between(r, ss.count[0], ss.count[1])
		geo := imageGeometry{count: count}
		if ss.dims != nil {
			geo.dims = pick(r, ss.dims)
			if ss.spacing[0] > 0 {
				sp := strconv.FormatFloat(math.Round(uniform(r, ss.spacing[0], ss.spacing[1])*1e6)/1e6, 'f', -1, 64)
				geo.spacing = sp + `\` + sp
			}
			if ss.thick != nil {
				geo.thick = pick(r, ss.thick)
			}
			source = &geo
		} else if source != nil {
			geo.dims, geo.spacing, geo.thick = source.dims, source.spacing, source.thick
		}
		var manufacturer, model, station, seq any
		if i := scannerFor(ss.modality); i >= 0 {
			sc := c.scanners[i]
			manufacturer, model, station = sc.manufacturer, sc.model, nullString(stations[i])
			if ss.modality == "MR" {
				switch {
				case strings.HasPrefix(sc.manufacturer, "SIEMENS"):
					seq = ss.seq[0]
				case strings.HasPrefix(sc.manufacturer, "GE"):
					seq = ss.seq[1]
				default:
					seq = ss.seq[2]
				}
			}
		}
		syntax := g.transferSyntax(c, ss.modality)
		var rows, cols any
		if geo.dims[0] > 0 {
			rows, cols = geo.dims[0], geo.dims[1]
		}
		size := g.instanceSize(ss.modality, geo, source, syntax)
		kind := 0
		switch ss.modality {
		case "SM":
			kind = 1
		case "US", "RTSTRUCT":
			kind = 2
		}
		if err := g.w.dicom.insert(c.id, patientID, sex, age, ss.modality, st.bodyPart, st.desc, ss.desc, seq,
			manufacturer, model, station, nullString(site.name), nullString(site.address), c.cancerType, "Human",
			studyUID, seriesUID, sopClass(ss.modality), syntax, date.Format(dateLayout), n+1,
			geo.thick, geo.spacing, rows, cols, count, size, kind); err != nil {
			return err
		}
		g.instances += int64(count)
	}
	return nil
}

// transferSyntax picks a series' transfer syntax.
func (g *imagingGen) transferSyntax(c *collectionSpec, modality string) string {
	r := g.r
	switch modality {
	case "SM":
		return pickWeighted(r, []choice[string]{{tsJPEG, 60}, {tsJPEG2000LL, 40}})
	case "US":
		return pickWeighted(r, []choice[string]{{tsJPEG, 50}, {tsExplicitLE, 50}})
	case "SEG", "RTSTRUCT", "MG":
		return tsExplicitLE
	}
	be := 0.0
	if c.oldScanners {
		be = 3
	}
	return pickWeighted(r, []choice[string]{{tsExplicitLE, 70}, {tsImplicitLE, 27}, {tsExplicitBE, be}})
}

// instanceSize returns the typical file size of one instance of a series.
func (g *imagingGen) instanceSize(modality string, geo imageGeometry, source *imageGeometry, syntax string) int64 {
	r := g.r
	header := int64(between(r, 1200, 6000))
	pixels := int64(geo.dims[0]) * int64(geo.dims[1])
	switch modality {
	case "SM":
		return int64(clamp(logNormal(r, 150e6, 0.9), 5e6, 2e9))
	case "US":
		size := pixels * 3
		if syntax == tsJPEG {
			size /= 10
		}
		return size + header
	case "SEG":
		frames := int64(1)
		if source != nil {
			frames = int64(source.count * between(r, 1, 3))
		}
		return pixels*frames/8 + 20_000 + header
	case "RTSTRUCT":
		return int64(between(r, 60_000, 2_000_000))
	}
	return pixels*2 + header
}
