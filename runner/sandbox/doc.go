// Package sandbox starts a job's process where it cannot touch the control
// plane or another job (DESIGN §6), and gives it back to the caller as one
// process tree to wait on and to kill. Its surface is small on purpose:
// what to run (argv, env, working directory), what it may see (read-only
// and writable host paths, a private /tmp) and its limits (memory, pids,
// cpu) go in as a Spec; a Process comes out. The script runner and, later,
// warm runtimes start everything through it, installs included.
//
// How a job starts (root worker; one bubblewrap and one setpriv exec, no
// shell, no mount binaries):
//
//	worker ──fork+exec, Pdeathsig──▶ bwrap (outer, host pid ns; v2: born in the job's cgroup)
//	  │ ◀── info-fd: child pid ─────┘ └─clone(user, mnt, pid, ipc, uts, cgroup ns)──▶ bwrap init (pid 1)
//	  │ v1: move the child into the job's cgroups    blocks on userns-block-fd
//	  │ uid_map "0 0 1, U U 1" (newuidmap for a non-root worker)
//	  └── unblock ─────────────────────────────────▶ mounts: /usr /etc … ro, WINDFORCE_DIR
//	                                                  hidden (tmpfs) but for the commit (ro)
//	                                                  and the job dir (rw), /tmp = job tmp,
//	                                                  new /proc, a few /dev nodes
//	                                                  no_new_privs
//	                                                  └─▶ setpriv --reuid U, no caps ─▶ bun …
//
// That is the start through setpriv. Inside the user namespace, uid 0 is
// the worker's own uid (root, or the worker's user), so bubblewrap
// resolves mount sources with the worker's rights even when WINDFORCE_DIR
// is 0700 under /root. Where the job's uid can reach every path it is
// shown, a root worker starts bwrap directly as U instead: no uid maps to
// write, no setpriv, no nested user namespaces (direct.go). Either way the
// job itself runs as U, a uid of its own leased from a range (one per running job, so two
// jobs never share one), which is never root and never the worker's as
// the host kernel sees it. It has no capabilities, cannot remount (the
// mounts are owned by a namespace it has no rights in; a nested user
// namespace only locks them further) and sees only its own processes.
//
// The tree is the job's cgroup (v2, or v1 memory+pids(+cpu) hierarchies):
// SIGTERM goes to every member but the two bwrap processes, then after the
// grace SIGKILL to all; bwrap's init is PID 1 of the job's namespace, so
// its death takes every process of the job with it, and the worker's death
// takes bwrap's (Pdeathsig, --die-with-parent).
//
// With Config.Off the job runs as the worker's user with none of this: its
// own process group, found again by an environment marker, and nothing
// else. The worker says so at start, in /readyz and in every job's logs.
package sandbox
