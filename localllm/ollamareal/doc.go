// Package ollamareal starts a real Ollama server and writes tiny
// random-weight GGUF models, for Clinsight's integration tests (build tag
// integration): the server binary is built from the Go module proxy by
// scripts/ollama-server.sh, and the models' output is noise, but they load
// in the real server and exercise its templates, JSON-schema grammar and
// embedding paths.
//
// Each Start runs its own server on a free loopback port with a temporary
// OLLAMA_MODELS and HOME, and stops it (and its runners) when the test
// ends.
package ollamareal
