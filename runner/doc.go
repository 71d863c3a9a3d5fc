// Package runner is the script worker's executor: the spine.Handler that
// runs a claimed job's pinned commit with bun, node, python or any
// executable (DESIGN §1, §3; docs/WORKERS.md).
//
//	spine.Worker ──claim──▶ Runner.Handle(ctx, job)
//	                          │ mint WF_TOKEN (wftoken, bound to job + claim)
//	                          ▼
//	   commitCache.acquire ── WINDFORCE_DIR/commits/{ws}/{source}/{commit}/  (read-only, shared)
//	     one flight per commit: Materialize from the object cache (marker
//	     required) → install (bun install --frozen-lockfile | npm ci) →
//	     chmod a-w → {commit}.ready; failures are not cached; LRU eviction
//	                          ▼
//	   jobDir ── WINDFORCE_DIR/jobs/{job}-{attempt}-*/ input.json ctx.json
//	             wrapper.mjs|wrapper.py home/ tmp/ → result.json | error.json
//	                          ▼
//	   runProcess ── worker ─Setpgid, Pdeathsig─▶ shim (/proc/self/exe) ─▶ [mount ns: ro commit] ─▶ runtime
//	     env = entry contract only; cgroup v2 of its own where writable
//	     stdout+stderr ─pipe─▶ logSink ─every 200ms─▶ Store.AppendLog (capped, masked)
//	     job ends ─▶ the rest is job.LogTail ─▶ written with the outcome, in its transaction
//	     ctx done (cancel│timeout│lost│shutdown) ─▶ SIGTERM tree, grace, SIGKILL
//	     tree = process group ∪ job cgroup ∪ processes with WF_JOB_ID=<id> in /proc/*/environ
//	     worker SIGKILLed ─▶ shim gets Pdeathsig ─▶ kills the tree within the grace
//	                          ▼
//	   outcome ── error.json → Failure{message, stack}; exit≠0 → Failure;
//	             result.json: ≤ MaxResultBytes, JSON, output schema → result
//	                          ▼
//	   masker ── WF_TOKEN → [WF_TOKEN], each secret value (and its base64 and
//	             URL-escaped forms) → [secret:NAME] in the logs (across chunks),
//	             the result (inside JSON strings, however escaped) and the
//	             error (message, stack) → the spine
package runner
