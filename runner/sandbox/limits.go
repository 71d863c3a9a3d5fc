package sandbox

// Defaults of DESIGN §6 for the per-job limits a worker enforces.
const (
	DefaultMemory = 1 << 30
	DefaultPids   = 512
)

// Limits bound one sandboxed process tree. Zero fields are "not set".
type Limits struct {
	// Memory in bytes; past it the kernel kills the job (Exit.OOM).
	Memory int64
	// Pids bounds processes and threads together.
	Pids int
	// CPU is a share in cores (1.5 = one and a half CPUs); 0 is no limit.
	CPU float64
}

// Cap fills l's unset fields from def and lowers each field to at most
// max's (a zero max field caps nothing).
func (l Limits) Cap(def, max Limits) Limits {
	pick := func(v, d, m int64) int64 {
		if v <= 0 {
			v = d
		}
		if m > 0 && (v <= 0 || v > m) {
			v = m
		}
		return v
	}
	out := Limits{
		Memory: pick(l.Memory, def.Memory, max.Memory),
		Pids:   int(pick(int64(l.Pids), int64(def.Pids), int64(max.Pids))),
		CPU:    l.CPU,
	}
	if out.CPU <= 0 {
		out.CPU = def.CPU
	}
	if max.CPU > 0 && (out.CPU <= 0 || out.CPU > max.CPU) {
		out.CPU = max.CPU
	}
	return out
}
