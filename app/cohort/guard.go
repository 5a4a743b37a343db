package cohort

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/clinsight/clinsight/internal/lazyre"
)

// privatePatterns match requests for identifying or protected details of a
// person. They are deliberately narrow: "drug name" or "the date of an
// admission" are not private; "the patient's name" or "his phone number"
// are.
var privatePatterns = sync.OnceValue(func() []*regexp.Regexp {
	return []*regexp.Regexp{
		regexp.MustCompile(`(?i)\b(?:patient(?:\s+\d+)?|patients|person|his|her|their|whose)(?:'s|s'|’s)?\s+(?:full\s+|first\s+|last\s+|real\s+|home\s+|maiden\s+)?(?:name|names|surname|address|addresses|phone|telephone|mobile|cell\s*phone|e-?mail|ssn|social\s+security|passport|driver'?s\s+licen[cs]e)\b`),
		// "the name of patient 42" (but not "the name of patient 42's
		// insurance", see possessive).
		regexp.MustCompile(`(?i)\b(?:name|names|address|addresses|phone\s+numbers?|telephone\s+numbers?|e-?mails?|social\s+security\s+numbers?)\s+of\s+(?:the\s+|a\s+|each\s+|all\s+|every\s+)?(?:patient|patients|person|people)(?:\s+\d+)?\b`),
		regexp.MustCompile(`(?i)\bwho\s+(?:is|was|are|were)\s+(?:the\s+)?patients?\s+\d+`),
		regexp.MustCompile(`(?i)\b(?:social\s+security\s+number|ssn|home\s+address|phone\s+number|telephone\s+number|e-?mail\s+address)\b`),
	}
})

// possessive matches the start of text continuing a name with "'s".
var possessive = lazyre.New(`^(?:'s|’s|s')\b`)

// yearContext matches a year named as a time the question is about.
var yearContext = lazyre.New(`(?i)\b(in|since|after|during|from|for|of|by|until|till|through|before|year)\s+(?:the\s+year\s+|early\s+|late\s+|mid-?)?((?:19|20|21)\d{2})\b`)

// dateLike matches dates written with a year: 2105-03-01, 2105-03, 03/2105,
// 03/01/2105.
var dateLike = lazyre.New(`\b((?:19|20|21)\d{2})-\d{2}(?:-\d{2})?\b|\b\d{1,2}/(?:\d{1,2}/)?((?:19|20|21)\d{2})\b`)

// guard classifies the questions that need no model to be declined: a
// request for private data, or a question about years after the data's
// end. It returns "" when the question may go on.
func guard(question string, facts Facts) (Category, string) {
	for _, p := range privatePatterns() {
		for _, loc := range p.FindAllStringIndex(question, -1) {
			if possessive().MatchString(question[loc[1]:]) {
				continue // "the name of patient 42's insurance": not the person's name
			}
			return PrivateData, fmt.Sprintf("the question asks for personal details (%q)", strings.TrimSpace(question[loc[0]:loc[1]]))
		}
	}
	end := facts.endYear()
	if end == 0 {
		return "", ""
	}
	var future []int
	past := false
	for _, m := range yearContext().FindAllStringSubmatchIndex(question, -1) {
		y, _ := strconv.Atoi(question[m[4]:m[5]])
		if m[5] < len(question) && question[m[5]] == '.' && m[5]+1 < len(question) && question[m[5]+1] >= '0' && question[m[5]+1] <= '9' {
			continue // a decimal number, not a year
		}
		word := strings.ToLower(question[m[2]:m[3]])
		if y > end && word != "before" && word != "until" && word != "till" && word != "by" {
			future = append(future, y)
		} else {
			past = true
		}
	}
	for _, m := range dateLike().FindAllStringSubmatch(question, -1) {
		s := m[1]
		if s == "" {
			s = m[2]
		}
		if y, _ := strconv.Atoi(s); y > end {
			future = append(future, y)
		} else {
			past = true
		}
	}
	if len(future) > 0 && !past {
		return FutureData, fmt.Sprintf("the question is about %d, after the end of the data (%d)", future[0], end)
	}
	return "", ""
}
