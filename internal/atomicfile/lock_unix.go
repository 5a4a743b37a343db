//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package atomicfile

import (
	"errors"
	"os"
	"syscall"
)

// closeBeforeRename: Unix renames an open file, so the writer keeps its
// lock until the file has its final name.
const closeBeforeRename = false

// syncDirs: Unix flushes a directory with fsync on it.
const syncDirs = true

// lock takes an exclusive flock on a writer's temporary file; it is
// released when the file is closed (or its process dies). Errors are
// ignored: a file system without flock makes tryLock report lockUnknown.
func lock(f *os.File) {
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
}

// tryLock opens path and tries to take the same lock without waiting. On
// lockFree the returned file holds the lock; close it when done.
func tryLock(path string) (lockState, *os.File) {
	f, err := os.Open(path)
	if err != nil {
		return lockUnknown, nil
	}
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	switch {
	case err == nil:
		return lockFree, f
	case errors.Is(err, syscall.EWOULDBLOCK):
		f.Close()
		return lockHeld, nil
	default:
		f.Close()
		return lockUnknown, nil
	}
}

// processGone reports whether no process with this ID exists on this
// machine. A process of another user (EPERM) exists; any other doubt counts
// as alive.
func processGone(pid int) bool {
	if pid <= 0 {
		return false
	}
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

// ignoreSyncError reports whether a directory fsync error only means the
// file system cannot do it.
func ignoreSyncError(err error) bool {
	return errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOTSUP) || errors.Is(err, syscall.EOPNOTSUPP)
}
