//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package atomicfile

import "os"

// closeBeforeRename: Windows cannot rename a file that is open.
const closeBeforeRename = true

// syncDirs: directories cannot be opened for fsync here.
const syncDirs = false

// lock does nothing where flock is not available: a live writer's file is
// then only recognised by its age.
func lock(*os.File) {}

// tryLock cannot tell whether a writer is alive here.
func tryLock(string) (lockState, *os.File) { return lockUnknown, nil }

// processGone cannot tell here.
func processGone(int) bool { return false }

func ignoreSyncError(error) bool { return true }
