package evidence

import "fmt"

// Brief describes the stopping rules in use and where they stand in a line
// or two for the PRISMA flow diagram (Summary has the assumptions too),
// "" when no rule is in use.
func (st StoppingStatus) Brief() string {
	var out string
	if st.Consecutive > 0 {
		met := "not met"
		if st.ConsecutiveMet {
			met = "met"
		}
		out = fmt.Sprintf("Consecutive irrelevant records: stop after %d in a row (last run %d, %s).", st.Consecutive, st.Run, met)
	}
	if s := st.Sample; s != nil {
		if out != "" {
			out += " "
		}
		out += fmt.Sprintf("Recall test (Callaghan & Müller-Hansen 2020): random sample of %d of the %d records left", len(s.IDs), s.Remaining)
		switch {
		case !st.SampleDone:
			out += fmt.Sprintf(", %d screened so far.", st.SampleScreened)
		case st.RecallMet:
			out += fmt.Sprintf("; recall at least %.1f%% with %.0f%% confidence (met).", 100*st.RecallLower, 100*StopConfidence)
		default:
			out += fmt.Sprintf("; recall at least %.1f%% with %.0f%% confidence (not met).", 100*st.RecallLower, 100*StopConfidence)
		}
	}
	return out
}
