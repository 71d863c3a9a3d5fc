package postgres

import (
	"context"
	"fmt"
	"sync"

	"github.com/jackc/pgx/v5"
)

// namedArgs are a statement's arguments by name (@name in its text), with
// pgx.StrictNamedArgs's contract: every name the statement uses is given,
// and no other. pgx's own rewrite lexes the statement's whole text on
// every execution, and ours carry their documentation (the claim,
// enqueue and completion are kilobytes of comments each): on the path
// of one job that was 15 % of the process's CPU. namedArgs lexes each
// text once (by pgx's rewrite) and keeps the positional text and the
// order of its names.
type namedArgs map[string]any

// RewriteQuery implements pgx.QueryRewriter.
func (a namedArgs) RewriteQuery(ctx context.Context, conn *pgx.Conn, sql string, _ []any) (string, []any, error) {
	r, err := positional(ctx, conn, sql, a)
	if err != nil {
		return "", nil, err
	}
	if len(a) != len(r.names) {
		return pgx.StrictNamedArgs(a).RewriteQuery(ctx, conn, sql, nil) // names the extra one
	}
	args := make([]any, len(r.names))
	for i, name := range r.names {
		v, ok := a[name]
		if !ok {
			return pgx.StrictNamedArgs(a).RewriteQuery(ctx, conn, sql, nil) // names the missing one
		}
		args[i] = v
	}
	return r.sql, args, nil
}

// rewritten is a statement's text with $n for its names, names[n-1].
type rewritten struct {
	sql   string
	names []string
}

// rewrites holds the rewritten statements by their text. The statements
// are the package's constants and a few texts built from them, but a
// bound keeps a text built per call from growing it without end.
var rewrites = struct {
	sync.RWMutex
	m map[string]rewritten
}{m: map[string]rewritten{}}

const maxRewrites = 1024

// argName stands for an argument while a statement is first rewritten,
// so that pgx's rewrite tells which name each $n is.
type argName string

// positional returns sql rewritten, lexing it only the first time.
func positional(ctx context.Context, conn *pgx.Conn, sql string, a namedArgs) (rewritten, error) {
	rewrites.RLock()
	r, ok := rewrites.m[sql]
	rewrites.RUnlock()
	if ok {
		return r, nil
	}
	probe := make(pgx.StrictNamedArgs, len(a))
	for name := range a {
		probe[name] = argName(name)
	}
	text, order, err := probe.RewriteQuery(ctx, conn, sql, nil)
	if err != nil {
		return rewritten{}, err
	}
	r = rewritten{sql: text, names: make([]string, len(order))}
	for i, v := range order {
		name, ok := v.(argName)
		if !ok {
			return rewritten{}, fmt.Errorf("rewrite named arguments: $%d is %T", i+1, v)
		}
		r.names[i] = string(name)
	}
	rewrites.Lock()
	if len(rewrites.m) < maxRewrites {
		rewrites.m[sql] = r
	}
	rewrites.Unlock()
	return r, nil
}
