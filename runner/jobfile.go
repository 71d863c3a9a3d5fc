package runner

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// errNoJobFile: the job did not write the file.
var errNoJobFile = errors.New("no such file")

// readJobFile reads a file the job wrote (its result or error file): it
// must be a regular file, is opened without following a link and without
// blocking (a FIFO would wait for a writer forever), and is read through
// a bound of max bytes (a file that grows past it, or /dev/zero, cannot
// exhaust the worker's memory). Anything else is a Failure of the job.
func readJobFile(path string, max int64) ([]byte, error) {
	name := filepath.Base(path)
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, errNoJobFile
	case errors.Is(err, syscall.ELOOP):
		return nil, &Failure{Kind: "invalid_result", Message: name + " is a symbolic link; the job must write a regular file"}
	case err != nil:
		return nil, &Failure{Kind: "invalid_result", Message: fmt.Sprintf("cannot read %s: %v", name, err)}
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	if !info.Mode().IsRegular() {
		return nil, &Failure{Kind: "invalid_result", Message: fmt.Sprintf("%s is not a regular file (%s); the job must write a regular file", name, kind(info.Mode()))}
	}
	if info.Size() > max {
		return nil, tooLarge(name, info.Size(), max)
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	if int64(len(data)) > max {
		return nil, tooLarge(name, int64(len(data)), max)
	}
	return data, nil
}

func tooLarge(name string, n, max int64) *Failure {
	name = strings.TrimSuffix(name, ".json")
	return &Failure{Kind: "result_too_large", Message: fmt.Sprintf(
		"%s is %d bytes, over the limit of %d bytes (WINDFORCE_MAX_RESULT_BYTES)", name, n, max)}
}

func kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m.IsDir():
		return "a directory"
	}
	return m.Type().String()
}
