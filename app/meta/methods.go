package meta

// MethodsFor lists the pooling methods that pool measure m, the default
// (REML) first: the random-effects estimators (REML, DL, PM, ML, SJ, HE,
// HS, EB), the common-effect model (EE), then for 2×2 counts
// Mantel–Haenszel (OR, RR, RD) and for the odds ratio Peto's method — the
// methods Options.Validate accepts with m. An empty or unknown measure
// gets the methods of every measure but MH and PETO.
func MethodsFor(m Measure) []Method {
	out := []Method{REML, DL, PM, ML, SJ, HE, HS, EB, EE}
	if m.Kind() == Binary {
		out = append(out, MH)
	}
	if m == OR {
		out = append(out, PETO)
	}
	return out
}
