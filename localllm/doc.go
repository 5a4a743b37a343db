// Package localllm is Clinsight's client for a local Ollama server: chat with
// streamed tokens, JSON-schema-constrained chat with validation and repair,
// batched embeddings, and model management (health, list, pull, import of a
// GGUF file), with errors a clinician can act on.
//
// Pipelines depend on the small interfaces [Chatter], [Embedder] and
// [ModelManager]; [*Client] implements them over
// github.com/ollama/ollama/api, and the sibling package ollamatest provides a
// scripted in-process Ollama server for tests.
//
// The client only ever talks to the configured host (by default
// http://127.0.0.1:11434, or $OLLAMA_HOST): it ignores HTTP proxy settings
// (its transport has no Proxy function, so HTTP_PROXY and friends are never
// read), never follows a redirect (a 3xx answer is an error naming both
// hosts, and no connection is made to the other one), refuses Ollama's
// cloud host and sends no telemetry.
//
// Every answer is bounded client-side (see [Config]): the wait for its start
// (HeaderTimeout, 5 minutes by default for model work, since loading a model
// on a laptop CPU is slow; InfoTimeout, 30 seconds, for quick questions), a
// pause in its middle (IdleTimeout, 2 minutes), and its size (a chat reply
// by the token budget Clinsight asked for, num_predict; other answers by
// what they can hold; every streamed line by 1 MiB). Chat requests always
// stream on the wire so that these bounds act while the model writes. Each
// bound ends the call with an error that says which one was reached.
//
// Two server behaviours are switched off on purpose: chat requests are sent
// with truncate=false and shift=false, so a prompt that does not fit the
// context window fails with a [ContextOverflow] error instead of being
// silently cut, and a reply that reaches the end of the window stops with
// done_reason "length".
package localllm
