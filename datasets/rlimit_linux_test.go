package datasets

import "syscall"

// limitAddressSpace caps the address space of this process (RLIMIT_AS).
func limitAddressSpace(bytes uint64) error {
	return syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: bytes, Max: bytes})
}
