package impression

import (
	"fmt"
	"strings"
)

// Observation is one of CheXpert's 14 observations.
type Observation int

// The 14 observations, in CheXpert's order (the order of a label vector).
const (
	NoFinding Observation = iota
	EnlargedCardiomediastinum
	Cardiomegaly
	LungLesion
	LungOpacity
	Edema
	Consolidation
	Pneumonia
	Atelectasis
	Pneumothorax
	PleuralEffusion
	PleuralOther
	Fracture
	SupportDevices
	// NumObservations is the length of a label vector.
	NumObservations = 14
)

// observationNames are CheXpert's names.
var observationNames = [NumObservations]string{
	"No Finding", "Enlarged Cardiomediastinum", "Cardiomegaly", "Lung Lesion",
	"Lung Opacity", "Edema", "Consolidation", "Pneumonia", "Atelectasis",
	"Pneumothorax", "Pleural Effusion", "Pleural Other", "Fracture", "Support Devices",
}

// observationColumns are the SQL column names of the label columns.
var observationColumns = [NumObservations]string{
	"no_finding", "enlarged_cardiomediastinum", "cardiomegaly", "lung_lesion",
	"lung_opacity", "edema", "consolidation", "pneumonia", "atelectasis",
	"pneumothorax", "pleural_effusion", "pleural_other", "fracture", "support_devices",
}

// AllObservations lists the observations in vector order.
func AllObservations() []Observation {
	out := make([]Observation, NumObservations)
	for i := range out {
		out[i] = Observation(i)
	}
	return out
}

// String returns CheXpert's name ("Pleural Effusion").
func (o Observation) String() string {
	if o < 0 || o >= NumObservations {
		return fmt.Sprintf("Observation(%d)", int(o))
	}
	return observationNames[o]
}

// Column returns the observation's SQL column name ("pleural_effusion").
func (o Observation) Column() string { return observationColumns[o] }

// Label is the value of one observation: CheXpert's 1, 0, −1, or blank
// (not mentioned), which the label vector stores as 2 (as ImpressionGPT
// does, so that Euclidean distances can be computed).
type Label int8

// The label values.
const (
	Positive  Label = 1
	Negative  Label = 0
	Uncertain Label = -1
	Blank     Label = 2
)

// String names the label.
func (l Label) String() string {
	switch l {
	case Positive:
		return "positive"
	case Negative:
		return "negative"
	case Uncertain:
		return "uncertain"
	case Blank:
		return "blank"
	}
	return fmt.Sprintf("Label(%d)", int(l))
}

// Labels is a report's label vector, indexed by Observation.
type Labels [NumObservations]Label

// BlankLabels returns a vector with every observation blank.
func BlankLabels() Labels {
	var l Labels
	for i := range l {
		l[i] = Blank
	}
	return l
}

// Distance2 returns the squared Euclidean distance between two label
// vectors (blank = 2).
func (l Labels) Distance2(m Labels) int {
	d := 0
	for i := range l {
		x := int(l[i]) - int(m[i])
		d += x * x
	}
	return d
}

// String writes the vector compactly: the non-blank observations with
// their labels, e.g. "Cardiomegaly=1 Pleural Effusion=0", or "(all blank)".
func (l Labels) String() string {
	var parts []string
	for i, v := range l {
		if v != Blank {
			parts = append(parts, fmt.Sprintf("%s=%d", observationNames[i], v))
		}
	}
	if len(parts) == 0 {
		return "(all blank)"
	}
	return strings.Join(parts, " ")
}

// Positives names the observations labelled positive, then (with a
// question mark) the uncertain ones: "Cardiomegaly, Edema?".
func (l Labels) Positives() string {
	var parts []string
	for i, v := range l {
		if v == Positive {
			parts = append(parts, observationNames[i])
		}
	}
	for i, v := range l {
		if v == Uncertain {
			parts = append(parts, observationNames[i]+"?")
		}
	}
	return strings.Join(parts, ", ")
}

// valid reports whether every value is one of 1, 0, −1, 2.
func (l Labels) valid() bool {
	for _, v := range l {
		switch v {
		case Positive, Negative, Uncertain, Blank:
		default:
			return false
		}
	}
	return true
}
