package trials

import "sync/atomic"

func newCounter() *atomic.Int64 { return new(atomic.Int64) }
