package runner

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"io"
	"sync"
)

// warmOutput is a warm process's stdout and stderr (one pipe, as a cold
// job's): it hands what the process writes to the log sink of the job it
// serves, up to that job's fence. The wrapper writes the fence after the
// job's last output and before its answer, so output still in the pipe
// when the answer arrives is the job's, and nothing the job wrote can be
// stored in the next job's logs. Output while no job is attached (a
// process the worker is retiring) is dropped.
type warmOutput struct {
	mu     sync.Mutex
	w      io.Writer // the job's log sink; nil between jobs
	fence  []byte
	held   []byte // a tail that may be the start of the fence
	fenced chan struct{}
}

// newFence is a job's fence: random, so the job cannot end its own logs
// early by printing it (it could only make its last lines go unstored).
func newFence() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "\x1fwf-fence-" + hex.EncodeToString(b[:]) + "\x1f"
}

// attach sends the output from now on to w until fence; the returned
// channel is closed when the fence has been read.
func (o *warmOutput) attach(w io.Writer, fence string) <-chan struct{} {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.w, o.fence, o.held = w, []byte(fence), nil
	o.fenced = make(chan struct{})
	return o.fenced
}

// detach stops sending output to the job (its sink is closing): what is
// held back is the job's, unless the fence never came.
func (o *warmOutput) detach() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.w != nil && len(o.held) > 0 {
		_, _ = o.w.Write(o.held)
	}
	o.w, o.fence, o.held = nil, nil, nil
}

// Write takes what the copier read from the pipe.
func (o *warmOutput) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.w == nil {
		return len(p), nil
	}
	data := append(o.held, p...)
	o.held = nil
	if i := bytes.Index(data, o.fence); i >= 0 {
		_, _ = o.w.Write(data[:i])
		close(o.fenced)
		o.w, o.fence = nil, nil
		return len(p), nil
	}
	keep := fenceStart(data, o.fence)
	_, _ = o.w.Write(data[:len(data)-keep])
	o.held = append([]byte(nil), data[len(data)-keep:]...)
	return len(p), nil
}

// fenceStart is the length of the longest tail of data that is the start
// of fence (not all of it), 0 when none is.
func fenceStart(data, fence []byte) int {
	for k := min(len(fence)-1, len(data)); k > 0; k-- {
		if bytes.HasSuffix(data, fence[:k]) {
			return k
		}
	}
	return 0
}
