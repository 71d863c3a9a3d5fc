// Package crashtest proves the spine's promises with real processes: a
// helper worker process (this test binary re-executed in a helper mode) is
// killed with SIGKILL or frozen with SIGSTOP in the middle of jobs, SQLite
// files are killed mid-write, and Postgres is restarted under load; the
// tests then check what the database says.
package crashtest
