package localllm

import (
	"os"
	"strings"
)

// HostFromEnv returns $OLLAMA_HOST normalised by [NormalizeHost], or
// [DefaultHost] when it is unset or invalid.
func HostFromEnv() string {
	h := strings.TrimSpace(os.Getenv("OLLAMA_HOST"))
	if h == "" {
		return DefaultHost
	}
	u, err := NormalizeHost(h)
	if err != nil {
		return DefaultHost
	}
	return u.String()
}
