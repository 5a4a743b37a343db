package ui

import (
	"bytes"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
)

// Fyne's test driver runs fyne.Do and fyne.DoAndWait inline, on whatever
// goroutine calls them ("tests all run on a single thread"). The screens
// work on goroutines and land their results through fyne.Do, so under that
// driver the landing code of several goroutines and the test's own taps
// touch widgets, and Fyne's shared caches, at the same time: the race
// detector reports it, and on a busy machine Fyne's table renderer dies
// with "concurrent map writes". The desktop driver runs every fyne.Do on
// its one UI goroutine, in order, and later than the call. The tests do the
// same: uiLoop is the UI goroutine of the test binary, testApp the Fyne
// test app whose driver hands every fyne.Do to it, and a test touches
// widgets and screen state only through onUI.

// uiLoop runs functions one at a time, in the order they were posted, on
// one goroutine.
type uiLoop struct {
	mu    sync.Mutex
	queue []func()
	wake  chan struct{}
	gid   atomic.Uint64 // the loop's goroutine
}

func newUILoop() *uiLoop {
	l := &uiLoop{wake: make(chan struct{}, 1)}
	started := make(chan struct{})
	go l.run(started)
	<-started
	return l
}

func (l *uiLoop) run(started chan<- struct{}) {
	l.gid.Store(goroutineID())
	close(started)
	for range l.wake {
		for {
			l.mu.Lock()
			if len(l.queue) == 0 {
				l.mu.Unlock()
				break
			}
			f := l.queue[0]
			l.queue[0] = nil
			l.queue = l.queue[1:]
			l.mu.Unlock()
			f()
		}
	}
}

// post queues f and returns at once (the queue is unbounded, as the desktop
// driver's, so a function running on the loop may post another).
func (l *uiLoop) post(f func()) {
	l.mu.Lock()
	l.queue = append(l.queue, f)
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// do runs f on the loop; with wait it returns when f has.
func (l *uiLoop) do(f func(), wait bool) {
	if !wait {
		l.post(f)
		return
	}
	if goroutineID() == l.gid.Load() {
		// The desktop driver deadlocks (or, before the FyneDo migration,
		// runs f on a new goroutine): a programming error either way.
		panic("fyne.DoAndWait called on the UI goroutine")
	}
	done := make(chan struct{})
	l.post(func() {
		defer close(done)
		f()
	})
	<-done
}

// goroutineID returns the current goroutine's number (tests only: it reads
// the runtime's stack header "goroutine N [...").
func goroutineID() uint64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b = bytes.TrimPrefix(b, []byte("goroutine "))
	if i := bytes.IndexByte(b, ' '); i > 0 {
		b = b[:i]
	}
	id, err := strconv.ParseUint(string(b), 10, 64)
	if err != nil {
		panic("cannot read the goroutine id: " + err.Error())
	}
	return id
}

// loopDriver is Fyne's test driver with fyne.Do and fyne.DoAndWait run on
// the loop.
type loopDriver struct {
	fyne.Driver
	loop *uiLoop
}

func (d *loopDriver) DoFromGoroutine(f func(), wait bool) { d.loop.do(f, wait) }

// loopApp is Fyne's test app with a loopDriver. A window is closed when
// the test that opened it ends: the app is the binary's, and a window left
// open stays in its driver's list, which every theme change repaints, so
// with windows piling up a test that changes the theme (withTheme) got
// slower with every test before it (TestCohortPrescreenMatrix: 25 s in the
// first run of -count=20, 342 s in the third).
type loopApp struct {
	fyne.App
	driver *loopDriver

	mu   sync.Mutex
	test *testing.T // the test running (this package's tests run one at a time)
}

func (a *loopApp) Driver() fyne.Driver { return a.driver }

func (a *loopApp) NewWindow(title string) fyne.Window {
	w := a.App.NewWindow(title)
	a.mu.Lock()
	t := a.test
	a.mu.Unlock()
	if t != nil {
		t.Cleanup(func() {
			fyne.DoAndWait(func() {
				// Unless the test closed it: Fyne's test driver panics
				// when a window is closed twice.
				if slices.Contains(a.driver.AllWindows(), w) {
					w.Close()
				}
			})
		})
	}
	return w
}

// setTest makes t the test whose windows are closed when it ends.
func (a *loopApp) setTest(t *testing.T) {
	a.mu.Lock()
	a.test = t
	a.mu.Unlock()
	t.Cleanup(func() {
		a.mu.Lock()
		if a.test == t {
			a.test = nil
		}
		a.mu.Unlock()
	})
}

var (
	testAppOnce sync.Once
	testApp     *loopApp
)

// newTestApp returns the test binary's Fyne app, whose fyne.Do runs on its
// UI goroutine. There is one for the whole binary, as there is one UI
// goroutine: work a finished test left running still lands there, never on
// a goroutine of its own beside the next test's.
func newTestApp(t *testing.T) fyne.App {
	t.Helper()
	testAppOnce.Do(func() {
		loop := newUILoop()
		loop.do(func() {
			base := test.NewApp()
			testApp = &loopApp{App: base, driver: &loopDriver{Driver: base.Driver(), loop: loop}}
			fyne.SetCurrentApp(testApp)
		}, true)
	})
	testApp.setTest(t)
	return testApp
}

// uiFatal is the panic with which a uiT stops a function run by onUI.
type uiFatal struct{}

// uiT is the testing.TB of a function run by onUI: Fatal and Skip stop that
// function (testing's own Goexit would end the UI goroutine instead), and
// onUI then stops the test on the test's goroutine.
type uiT struct {
	testing.TB
	failed, skipped bool
}

func (t *uiT) FailNow() {
	t.TB.Helper()
	t.TB.Fail()
	t.failed = true
	panic(uiFatal{})
}

func (t *uiT) Fatal(args ...any) {
	t.TB.Helper()
	t.TB.Error(args...)
	t.failed = true
	panic(uiFatal{})
}

func (t *uiT) Fatalf(format string, args ...any) {
	t.TB.Helper()
	t.TB.Errorf(format, args...)
	t.failed = true
	panic(uiFatal{})
}

func (t *uiT) SkipNow() {
	t.skipped = true
	panic(uiFatal{})
}

func (t *uiT) Skip(args ...any) {
	t.TB.Helper()
	t.TB.Log(args...)
	t.SkipNow()
}

func (t *uiT) Skipf(format string, args ...any) {
	t.TB.Helper()
	t.TB.Logf(format, args...)
	t.SkipNow()
}

// onUI runs f on the UI goroutine, as an event handler runs, and waits for
// it. f reads and changes widgets and screen state; it may call t.Fatal.
func onUI(t *testing.T, f func(t testing.TB)) {
	t.Helper()
	ut := &uiT{TB: t}
	fyne.DoAndWait(func() {
		defer func() {
			if r := recover(); r != nil {
				if _, ok := r.(uiFatal); !ok {
					panic(r)
				}
			}
		}()
		f(ut)
	})
	switch {
	case ut.failed:
		t.FailNow()
	case ut.skipped:
		t.SkipNow()
	}
}

// tapOnUI taps a button (or any tappable) on the UI goroutine.
func tapOnUI(t *testing.T, o fyne.Tappable) {
	t.Helper()
	onUI(t, func(testing.TB) { test.Tap(o) })
}

// waitTimeout bounds every wait of the ui tests: generous, because the
// race detector on a loaded two-core machine slows the screens' work down
// many times over.
const waitTimeout = 90 * time.Second

// eventually reports whether cond, checked on the UI goroutine (after what
// was posted to it before), holds within waitTimeout.
func eventually(cond func() bool) bool {
	deadline := time.Now().Add(waitTimeout)
	for {
		var ok bool
		fyne.DoAndWait(func() { ok = cond() })
		if ok {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitUntil waits until cond, checked on the UI goroutine, holds.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	if !eventually(cond) {
		t.Fatalf("timed out after %s waiting for %s", waitTimeout, what)
	}
}
