package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/windforce/windforce/spine"
)

// EnqueueInsertBatch inserts jobs without a coalesce key in one statement
// (queries/enqueue_batch.sql) and wakes tags (notify.sql), both in one
// round trip (driver.JobExecutor).
func (e *executor) EnqueueInsertBatch(ctx context.Context, ps []spine.EnqueueParams, tags []string) error {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	notify := namedArgs{"channel": e.d.channel, "payloads": tags}
	if len(ps) == 0 {
		_, err := e.q.Exec(ctx, qNotify, notify)
		return translate(err)
	}
	n := len(ps)
	var (
		ids                                   = make([]uuid.UUID, n)
		workspaces, kinds, refs, bys, inputs  = make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		sources, shas, apps, actions, entries = make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		runtimes, jobTags                     = make([]string, n), make([]string, n)
		inSchemas, outSchemas                 = make([]*string, n), make([]*string, n)
		schemas                               schemaSet
		nows, scheduled                       = make([]*time.Time, n), make([]*time.Time, n)
		timeouts, backoffs                    = make([]int64, n), make([]int64, n)
		priorities, maxAttempts               = make([]int32, n), make([]int32, n)
		factors                               = make([]float64, n)
		memories, pidss, cpus                 = make([]*int64, n), make([]*int32, n), make([]*float64, n)
		envs, warms                           = make([]*string, n), make([]*string, n)
	)
	for i, p := range ps {
		ids[i], workspaces[i], kinds[i], refs[i], bys[i] = p.ID, p.Workspace, string(p.TriggerKind), p.TriggerRef, p.CreatedBy
		inputs[i] = string(p.Input)
		sources[i], shas[i], apps[i], actions[i] = p.Pin.GitSourceID, p.Pin.CommitSHA, p.Pin.AppKey, p.Pin.ActionKey
		entries[i], runtimes[i], jobTags[i] = p.Pin.Entrypoint, p.Pin.Runtime, p.Pin.Tag
		inSchemas[i], outSchemas[i] = schemas.add(p.Pin.InputSchema), schemas.add(p.Pin.OutputSchema)
		nows[i], scheduled[i] = optTime(p.Now), optTime(p.ScheduledFor)
		timeouts[i], backoffs[i] = p.Pin.Timeout.Milliseconds(), max(1, p.Pin.Retry.Backoff.Milliseconds())
		priorities[i], maxAttempts[i] = int32(p.Priority), int32(p.Pin.Retry.MaxAttempts)
		factors[i] = p.Pin.Retry.Factor
		memories[i], pidss[i], cpus[i] = optLimits(p.Pin.Limits)
		envs[i], warms[i] = spine.EnvColumn(p.Pin.Env), spine.WarmColumn(p.Pin.Warm)
	}
	batch := &pgx.Batch{}
	batch.Queue(qEnqueueBatch, namedArgs{
		"ids": ids, "workspaces": workspaces, "trigger_kinds": kinds, "trigger_refs": refs,
		"created_bys": bys, "nows": nows, "scheduled_fors": scheduled, "inputs": inputs,
		"git_source_ids": sources, "commit_shas": shas, "app_keys": apps, "action_keys": actions,
		"entrypoints": entries, "runtimes": runtimes, "input_schema_hashes": inSchemas, "output_schema_hashes": outSchemas,
		"timeout_mss": timeouts, "tags": jobTags, "priorities": priorities, "max_attemptss": maxAttempts,
		"backoff_mss": backoffs, "backoff_factors": factors,
		"limit_memories": memories, "limit_pidss": pidss, "limit_cpus": cpus, "envs": envs, "warms": warms,
		"schema_hashes": schemas.hashes, "schema_bodies": schemas.bodies, "schema_touch_ms": schemaTouch.Milliseconds(),
	})
	batch.Queue(qNotify, notify)
	br := e.q.SendBatch(ctx, batch)
	defer br.Close()
	var inserted int
	if err := br.QueryRow().Scan(&inserted); err != nil {
		return translate(err)
	}
	if inserted != n {
		return fmt.Errorf("inserted %d of %d jobs", inserted, n)
	}
	if _, err := br.Exec(); err != nil {
		return fmt.Errorf("wake workers: %w", translate(err))
	}
	return translate(br.Close())
}

// optLimits are limits as nullable array elements (NULL where not set).
func optLimits(l spine.Limits) (memory *int64, pids *int32, cpu *float64) {
	if l.Memory > 0 {
		memory = &l.Memory
	}
	if l.Pids > 0 {
		n := int32(l.Pids)
		pids = &n
	}
	if l.CPU > 0 {
		cpu = &l.CPU
	}
	return memory, pids, cpu
}

// optTime is a time as a nullable timestamptz array element (NULL when
// zero: the SQL then uses the database clock).
func optTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}
