package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// BenchmarkStart measures what the sandbox adds to starting a process:
// the same /bin/true started bare, through an unsandboxed Sandbox, and
// through the sandbox both ways a root worker starts it (through setpriv
// below a 0700 folder, directly as the job's uid otherwise), each to its
// exit. `go test -bench Start -run ^$ ./runner/sandbox/`
func BenchmarkStart(b *testing.B) {
	b.Run("bare", func(b *testing.B) {
		for b.Loop() {
			if err := exec.Command("/bin/true").Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, mode := range []string{"off", "setpriv", "direct"} {
		b.Run(mode, func(b *testing.B) {
			s, err := New(Config{Off: mode == "off", Hide: []string{b.TempDir()}})
			if err != nil {
				b.Skipf("SKIPPING: %v", err)
			}
			defer s.Close()
			dir := filepath.Join(b.TempDir(), "job")
			if err := os.Mkdir(dir, 0o700); err != nil {
				b.Fatal(err)
			}
			if mode == "direct" { // parents searchable: bwrap starts as the job's uid
				for d := filepath.Dir(dir); d != os.TempDir(); d = filepath.Dir(d) {
					if err := os.Chmod(d, 0o711); err != nil {
						b.Fatal(err)
					}
				}
			}
			i := 0
			for b.Loop() {
				i++
				p, err := s.Start(Spec{Name: "b" + strconv.Itoa(i), Argv: []string{"/bin/true"}, Dir: dir, Writable: []string{dir}, Tmp: dir})
				if err != nil {
					b.Fatal(err)
				}
				if ex := p.Wait(); !ex.Success() {
					b.Fatal(ex)
				}
			}
		})
	}
}
