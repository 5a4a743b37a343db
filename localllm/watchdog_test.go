package localllm

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestWatchdogIgnoresLateSendingHooks: the transport's WroteRequest hook
// runs on its write goroutine and can come after the response has arrived.
// Once reading has started, such a late hook must not replace a body read's
// idle countdown with the (much longer) header timeout: the idle countdown
// still cancels the request in time.
func TestWatchdogIgnoresLateSendingHooks(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	dog := &watchdog{cancel: cancel}
	idleErr, headerErr := errors.New("idle"), errors.New("header")
	dog.armSending(time.Hour, headerErr)
	dog.startReading()
	dog.arm(50*time.Millisecond, idleErr) // a body read waits
	dog.armSending(time.Hour, headerErr)  // the late hook
	select {
	case <-ctx.Done():
		if !errors.Is(context.Cause(ctx), idleErr) {
			t.Errorf("cancelled with %v, want the idle error", context.Cause(ctx))
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the idle countdown did not cancel the request: a late sending hook replaced it")
	}
}
