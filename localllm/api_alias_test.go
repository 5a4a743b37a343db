package localllm_test

import "github.com/ollama/ollama/api"

// apiChatRequest is the Ollama request type the test server hands to
// handler funcs.
type apiChatRequest = api.ChatRequest
