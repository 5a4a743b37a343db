// Package inputfile opens the files a user gives Clinsight to read (data,
// literature, trial registries, study tables), refusing what is not a
// regular file before reading it: opening a named pipe (FIFO) waits until
// another program writes to it, deaf to Cancel and Ctrl-C, and a device
// such as /dev/zero or /dev/urandom never ends.
package inputfile

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Check returns the file's information (following symbolic links), or an
// error saying why path cannot be read as a file: it does not exist, it is
// a folder, or it is not a regular file.
func Check(path string) (fs.FileInfo, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := Regular(path, fi); err != nil {
		return nil, err
	}
	return fi, nil
}

// Regular returns an error when fi, the information of path, is not that
// of a regular file.
func Regular(path string, fi fs.FileInfo) error {
	name := filepath.Base(path)
	m := fi.Mode()
	switch {
	case m.IsRegular():
		return nil
	case m.IsDir():
		return fmt.Errorf("%s is a folder, not a file", name)
	case m&fs.ModeNamedPipe != 0:
		return fmt.Errorf("%s is a named pipe, not a file: reading it would wait for another program to write to it; save the data to a file and open that", name)
	case m&fs.ModeSocket != 0:
		return fmt.Errorf("%s is a socket, not a file; save the data to a file and open that", name)
	case m&(fs.ModeDevice|fs.ModeCharDevice) != 0:
		return fmt.Errorf("%s is a device, not a file; save the data to a file and open that", name)
	}
	return fmt.Errorf("%s is not a regular file; save the data to a file and open that", name)
}

// Open opens path for reading once it is known to be a regular file, and
// returns the open file with its information. A path that cannot be
// looked at gives os.Open's error ("open PATH: no such file or directory").
func Open(path string) (*os.File, fs.FileInfo, error) {
	if fi, err := os.Stat(path); err == nil {
		if err := Regular(path, fi); err != nil {
			return nil, nil, err
		}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err == nil {
		err = Regular(path, fi) // replaced between the two looks
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}
