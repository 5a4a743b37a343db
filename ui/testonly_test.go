package ui

import "strings"

// answerText is the plain text of the answer shown.
func (s *CohortScreen) answerText() string {
	var b strings.Builder
	for _, seg := range s.answer.Segments {
		b.WriteString(seg.Textual())
	}
	return b.String()
}
