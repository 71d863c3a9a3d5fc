package runner

import "time"

// WarmStats is what a runner's warm pool holds (DESIGN §7), for the
// worker's status line, /readyz and the metrics.
type WarmStats struct {
	// Processes are the live warm processes, Busy those serving a job;
	// Max is the pool's cap (the worker's slots).
	Processes, Busy, Max int
	// Memory is the pool's total: every process's memory now.
	Memory int64
	// Each describes every process.
	Each []WarmProcess
}

// WarmProcess is one warm process in WarmStats.
type WarmProcess struct {
	Workspace, App, Commit, Runtime string
	// Pid is the runtime's host pid (0 while it starts).
	Pid  int
	Busy bool
	// Jobs is how many jobs it has served.
	Jobs int
	// Memory is its memory now (its cgroup's, or its resident set with
	// the sandbox off); IdleMemory what it held after its last job.
	Memory, IdleMemory int64
	Started            time.Time
	// IdleSince is when its last job ended (zero while busy).
	IdleSince time.Time
}

// WarmStats describes the warm pool now.
func (r *Runner) WarmStats() WarmStats {
	pl := r.warm
	pl.mu.Lock()
	st := WarmStats{Processes: len(pl.procs), Max: pl.max}
	procs := make([]*warmProc, 0, len(pl.procs))
	for wp := range pl.procs {
		if wp.main == 0 {
			procs = append(procs, nil) // starting: nothing to read yet
		} else {
			procs = append(procs, wp)
		}
		w := WarmProcess{Workspace: wp.key.workspace, App: wp.key.app, Commit: wp.key.commit, Runtime: wp.key.runtime,
			Pid: wp.main, Busy: wp.busy, Jobs: wp.jobs, IdleMemory: wp.idleMem, Started: wp.started}
		if wp.busy {
			st.Busy++
		} else {
			w.IdleSince = wp.idleSince
		}
		st.Each = append(st.Each, w)
	}
	pl.mu.Unlock()
	for i, wp := range procs {
		// Read outside the lock: a cgroup file per process.
		if wp != nil {
			st.Each[i].Memory, _ = wp.memory()
			st.Memory += st.Each[i].Memory
		}
	}
	return st
}
