package datasets

import (
	"encoding/hex"
	"encoding/json"
)

// Blob is a BLOB value read from a database. It prints and marshals as
// lowercase hexadecimal, so results stay readable and JSON-safe.
type Blob []byte

// String returns the blob as hexadecimal.
func (b Blob) String() string { return hex.EncodeToString(b) }

// MarshalJSON encodes the blob as a hexadecimal JSON string.
func (b Blob) MarshalJSON() ([]byte, error) { return json.Marshal(b.String()) }
