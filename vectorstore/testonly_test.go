package vectorstore

// legacyTempPrefix is the pattern prefix of the temporary files that
// earlier versions wrote for a collection file base name. Their writers held
// no lock, so Open removes one only when it is old enough that no writer
// can still be at work on it (legacyTempAge); temporary files of the
// current writer are cleaned by internal/atomicfile under its lock rule.
func legacyTempPrefix(base string) string { return "." + base + ".tmp-" }
