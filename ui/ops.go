package ui

import "sync"

// opCounter counts a screen's finished asynchronous operations, so tests
// can wait for background work to land on the UI.
type opCounter struct {
	mu sync.Mutex
	n  int
}

// done records a finished operation.
func (c *opCounter) done() {
	c.mu.Lock()
	c.n++
	c.mu.Unlock()
}

// finishedOps returns how many operations have finished.
func (c *opCounter) finishedOps() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}
