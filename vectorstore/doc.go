// Package vectorstore keeps named collections of embedded documents on disk
// and answers similarity queries over them, on top of chromem-go.
//
// # Privacy
//
// chromem-go embeds texts itself with OpenAI when a collection has no
// embedding function, and its Ollama function embeds one text per request.
// This package never lets chromem embed anything: every chromem collection is
// created with a function that refuses to run, all vectors are computed here,
// in batches, through the caller's [Embedder] (the local model client, or the
// [LexicalEmbedder] fallback), and handed to chromem precomputed. Nothing in
// this package opens a network connection.
//
// # Embedders and rebuilds
//
// A collection records the name and dimension of the embedder that built it.
// [Store.Collection] with an embedder of another name re-embeds every stored
// text with the new embedder before returning (a rebuild, reported through
// [Options.OnRebuild] and [Collection.Rebuilt]); vectors of two embedders are
// never mixed in one collection. Every document therefore keeps its text.
//
// # Persistence
//
// Each collection lives in one file, <dir>/<name>.clvs, rewritten as a whole
// after every change: written to a temporary file in the same directory,
// fsynced, then renamed over the old one, so a crash or an error leaves
// either the old or the new file, never a torn one. [Open] loads every
// collection file of the directory. chromem's own persistence (one file per
// document, named after 4 bytes of a hash) is not used: it loses documents
// to name collisions at about 100,000 documents.
//
// File format, version 1 (all integers little-endian):
//
//	magic      8 bytes  "CLVS\r\n\x1a\n"
//	version    uint32   1
//	hdrLen     uint32   length of the JSON header
//	header     JSON     {"name", "embedder", "dim", "count", "saved_at"}
//	vectors    count*dim float32 (IEEE 754 bits), document by document,
//	           each vector L2-normalised
//	documents  count times: ID, text, then the number of metadata pairs and
//	           each key and value (keys sorted); every string is a uvarint
//	           byte length followed by its UTF-8 bytes, the count a uvarint
//	trailer    uint32   CRC-32 (Castagnoli) of every preceding byte
//
// Documents appear in insertion order. A reader refuses a file whose magic,
// version, checksum, sizes or header do not match, naming the file in the
// error ([ErrCorrupt], [ErrUnsupportedVersion]); the other collections of the
// directory stay usable. A store directory is meant for one process at a
// time.
//
// # Search
//
// chromem-go is the document store (collections, metadata, the documents),
// but queries do not go through its scan: each collection also keeps its
// vectors in one contiguous row-major float32 matrix (the chromem
// documents and the records share its rows, so vectors are held once),
// and a query multiplies it by the query vector with BLAS (gonum's
// blas32.Gemv) in blocks spread over the cores, a metadata filter being
// applied as a bitmap of each block's rows before it is scored, and each
// worker keeping its best rows in a fixed-size heap. The search is exact:
// it returns what chromem-go's QueryEmbedding returns (the same documents,
// similarities equal to 1e-6), ties broken by ID, at the speed the memory
// can be read (see scan.go and matrix.go).
//
// # Concurrency
//
// A [Store] and its [Collection] values are safe for concurrent use. Queries
// run in parallel with each other; changes to one collection (add, delete,
// rebuild) are serialised, and queries keep answering from the previous state
// while a change is being embedded and written.
package vectorstore
