// Package initcost holds a test, and nothing else, that keeps Clinsight's
// own packages cheap to initialise: every command (clinsight --help
// included) pays for the package initialisation of everything the binary
// links, so a package-level regular expression, table or schema is built
// on first use (internal/lazyre, sync.OnceValue, textsearch.WordSet), not
// in the package's initialiser. The test links the CLI's packages, runs
// its own binary with GODEBUG=inittrace=1 and checks the bytes each of
// Clinsight's packages allocates while initialising (deterministic,
// unlike the times, which depend on the machine's load).
package initcost
