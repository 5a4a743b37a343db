//go:build !linux

package datasets

import "errors"

func limitAddressSpace(uint64) error { return errors.New("address-space limits are only set on Linux") }
