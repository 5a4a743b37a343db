package ollamareal

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/ollama/ollama/fs/ggml"
)

// tensorF32 returns an F32 tensor of the given shape (GGUF order: the
// innermost dimension first) filled by fill.
func tensorF32(name string, fill func(i int) float32, shape ...uint64) *ggml.Tensor {
	n := uint64(1)
	for _, d := range shape {
		n *= d
	}
	buf := make([]byte, 4*n)
	for i := range n {
		binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(fill(int(i))))
	}
	return &ggml.Tensor{Name: name, Kind: 0 /* F32 */, Shape: shape, WriterTo: bytes.NewReader(buf)}
}

// writeGGUF writes kv and tensors to path.
func writeGGUF(tb testing.TB, path string, kv ggml.KV, ts []*ggml.Tensor) {
	tb.Helper()
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	if err := ggml.WriteGGUF(f, kv, ts); err != nil {
		tb.Fatalf("WriteGGUF %s: %v", path, err)
	}
}

// LlamaContext is the trained context length of WriteTinyLlama's model.
const LlamaContext = 16384

// WriteTinyLlama writes a 2-layer llama with hidden size 32 and a
// SentencePiece vocabulary of byte tokens (so any text tokenizes and the
// JSON grammar can spell anything) to path.
func WriteTinyLlama(tb testing.TB, path string) {
	tb.Helper()
	const (
		hidden = 32
		heads  = 4
		ff     = 64
		layers = 2
	)
	tokens := []string{"<unk>", "<s>", "</s>"}
	types := []int32{2, 3, 3} // unknown, control, control
	for b := range 256 {
		tokens = append(tokens, fmt.Sprintf("<0x%02X>", b))
		types = append(types, 6) // byte
	}
	for _, w := range []string{"▁", "▁the", "▁yes", "▁no", "▁patient", "{", "}", "\"", ":", ","} {
		tokens = append(tokens, w)
		types = append(types, 1) // normal
	}
	scores := make([]float32, len(tokens))
	for i := range scores {
		scores[i] = -float32(i)
	}
	vocab := uint64(len(tokens))

	rng := rand.New(rand.NewPCG(1, 2))
	noise := func(int) float32 { return float32(rng.NormFloat64() * 0.2) }
	one := func(int) float32 { return 1 }
	ts := []*ggml.Tensor{
		tensorF32("token_embd.weight", noise, hidden, vocab),
		tensorF32("output_norm.weight", one, hidden),
		tensorF32("output.weight", noise, hidden, vocab),
	}
	for l := range layers {
		p := fmt.Sprintf("blk.%d.", l)
		ts = append(ts,
			tensorF32(p+"attn_norm.weight", one, hidden),
			tensorF32(p+"attn_q.weight", noise, hidden, hidden),
			tensorF32(p+"attn_k.weight", noise, hidden, hidden),
			tensorF32(p+"attn_v.weight", noise, hidden, hidden),
			tensorF32(p+"attn_output.weight", noise, hidden, hidden),
			tensorF32(p+"ffn_norm.weight", one, hidden),
			tensorF32(p+"ffn_gate.weight", noise, hidden, ff),
			tensorF32(p+"ffn_up.weight", noise, hidden, ff),
			tensorF32(p+"ffn_down.weight", noise, ff, hidden),
		)
	}
	writeGGUF(tb, path, ggml.KV{
		"general.architecture":                   "llama",
		"general.name":                           "clinsight-tiny-llama",
		"general.file_type":                      uint32(0), // all F32
		"llama.block_count":                      uint32(layers),
		"llama.context_length":                   uint32(LlamaContext),
		"llama.embedding_length":                 uint32(hidden),
		"llama.feed_forward_length":              uint32(ff),
		"llama.attention.head_count":             uint32(heads),
		"llama.attention.head_count_kv":          uint32(heads),
		"llama.attention.layer_norm_rms_epsilon": float32(1e-5),
		"llama.rope.dimension_count":             uint32(hidden / heads),
		"llama.rope.freq_base":                   float32(10000),
		"llama.vocab_size":                       uint32(vocab),
		"tokenizer.ggml.model":                   "llama",
		"tokenizer.ggml.tokens":                  tokens,
		"tokenizer.ggml.scores":                  scores,
		"tokenizer.ggml.token_type":              types,
		"tokenizer.ggml.bos_token_id":            uint32(1),
		"tokenizer.ggml.eos_token_id":            uint32(2),
		"tokenizer.ggml.unknown_token_id":        uint32(0),
		"tokenizer.ggml.add_bos_token":           true,
		"tokenizer.ggml.add_eos_token":           false,
	}, ts)
}

// BertContext is the trained context length of WriteTinyBert's model.
const BertContext = 512

// WriteTinyBert writes a 2-layer BERT embedding model with hidden size 32,
// mean pooling and a WordPiece vocabulary of single characters to path,
// and returns its embedding dimension.
func WriteTinyBert(tb testing.TB, path string) int {
	tb.Helper()
	const (
		hidden = 32
		heads  = 4
		ff     = 64
		layers = 2
	)
	tokens := []string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}
	types := []int32{3, 2, 3, 3, 3}
	for _, c := range "abcdefghijklmnopqrstuvwxyz0123456789.,;:!?'\"()-" {
		tokens = append(tokens, "▁"+string(c), string(c))
		types = append(types, 1, 1)
	}
	vocab := uint64(len(tokens))

	rng := rand.New(rand.NewPCG(3, 4))
	noise := func(int) float32 { return float32(rng.NormFloat64() * 0.2) }
	one := func(int) float32 { return 1 }
	zero := func(int) float32 { return 0 }
	ts := []*ggml.Tensor{
		tensorF32("token_embd.weight", noise, hidden, vocab),
		tensorF32("token_types.weight", noise, hidden, 2),
		tensorF32("position_embd.weight", noise, hidden, BertContext),
		tensorF32("token_embd_norm.weight", one, hidden),
		tensorF32("token_embd_norm.bias", zero, hidden),
	}
	for l := range layers {
		p := fmt.Sprintf("blk.%d.", l)
		for _, n := range []string{"attn_q", "attn_k", "attn_v", "attn_output"} {
			ts = append(ts, tensorF32(p+n+".weight", noise, hidden, hidden), tensorF32(p+n+".bias", zero, hidden))
		}
		ts = append(ts,
			tensorF32(p+"attn_output_norm.weight", one, hidden),
			tensorF32(p+"attn_output_norm.bias", zero, hidden),
			tensorF32(p+"ffn_up.weight", noise, hidden, ff),
			tensorF32(p+"ffn_up.bias", zero, ff),
			tensorF32(p+"ffn_down.weight", noise, ff, hidden),
			tensorF32(p+"ffn_down.bias", zero, hidden),
			tensorF32(p+"layer_output_norm.weight", one, hidden),
			tensorF32(p+"layer_output_norm.bias", zero, hidden),
		)
	}
	writeGGUF(tb, path, ggml.KV{
		"general.architecture":              "bert",
		"general.name":                      "clinsight-tiny-bert",
		"general.file_type":                 uint32(0),
		"bert.block_count":                  uint32(layers),
		"bert.context_length":               uint32(BertContext),
		"bert.embedding_length":             uint32(hidden),
		"bert.feed_forward_length":          uint32(ff),
		"bert.attention.head_count":         uint32(heads),
		"bert.attention.layer_norm_epsilon": float32(1e-12),
		"bert.attention.causal":             false,
		"bert.pooling_type":                 uint32(1), // mean
		"tokenizer.ggml.model":              "bert",
		"tokenizer.ggml.tokens":             tokens,
		"tokenizer.ggml.token_type":         types,
		"tokenizer.ggml.cls_token_id":       uint32(2),
		"tokenizer.ggml.separator_token_id": uint32(3),
		"tokenizer.ggml.padding_token_id":   uint32(0),
		"tokenizer.ggml.unknown_token_id":   uint32(1),
		"tokenizer.ggml.mask_token_id":      uint32(4),
	}, ts)
	return hidden
}
