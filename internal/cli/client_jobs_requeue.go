package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"

	"github.com/windforce/windforce/catalog"
)

// requeueAnswer is the answer of POST /api/w/{ws}/jobs/requeue.
type requeueAnswer struct {
	Requeued []struct {
		From string `json:"from"`
		To   string `json:"to"`
	} `json:"requeued"`
	Skipped []struct {
		ID     string `json:"id"`
		Code   string `json:"code"`
		Reason string `json:"reason"`
	} `json:"skipped"`
	NextCursor *string `json:"next_cursor"`
}

// jobsRequeue is `jobs requeue [ID…] [--app A] [--action X] [--tag T] [--batch N]`:
// the waiting jobs picked are moved to the catalog as it is now, each as
// the single requeue does. It calls the API batch after batch (ids in
// chunks of --batch, a filter --batch at a time by its cursor) until every
// picked job was requeued or skipped, printing each, and a skipped job
// with its reason; skips do not fail the command (a running job is
// expected to be skipped), an API error does.
func jobsRequeue(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, cf := newClientFlags("jobs requeue", stderr)
	app := fs.String("app", "", "only waiting jobs of this app")
	action := fs.String("action", "", "only waiting jobs of this action")
	tag := fs.String("tag", "", "only waiting jobs pinned to this tag")
	batch := fs.Int("batch", catalog.MaxRequeueBatch, fmt.Sprintf("jobs per API call (1..%d)", catalog.MaxRequeueBatch))
	ids, err := parseArgs(fs, args, 0, -1, "[ID…] [--app A] [--action X] [--tag T] [--batch N]")
	if err != nil {
		return err
	}
	if *batch < 1 || *batch > catalog.MaxRequeueBatch {
		return &UsageError{Msg: fmt.Sprintf("--batch %d: want 1..%d", *batch, catalog.MaxRequeueBatch)}
	}
	if len(ids) == 0 && *app == "" && *action == "" && *tag == "" {
		return &UsageError{Msg: "usage: windforce jobs requeue [ID…] [--app A] [--action X] [--tag T]: name jobs or at least one filter"}
	}
	c, err := cf.newClient()
	if err != nil {
		return err
	}
	var all requeueAnswer
	call := func(body map[string]any) (requeueAnswer, error) {
		var a requeueAnswer
		_, _, err := c.callJSON(ctx, request{method: http.MethodPost, path: c.ws("jobs", "requeue"), body: jsonBody(body)}, &a)
		if err != nil {
			return a, fmt.Errorf("requeue jobs (%d requeued before this): %w", len(all.Requeued), err)
		}
		all.Requeued, all.Skipped = append(all.Requeued, a.Requeued...), append(all.Skipped, a.Skipped...)
		if !cf.json {
			for _, m := range a.Requeued {
				fmt.Fprintf(stdout, "requeued %s as %s\n", m.From, m.To)
			}
			for _, s := range a.Skipped {
				fmt.Fprintf(stdout, "skipped %s: %s\n", s.ID, s.Reason)
			}
		}
		return a, nil
	}
	filter := map[string]any{}
	for k, v := range map[string]string{"app": *app, "action": *action, "tag": *tag} {
		if v != "" {
			filter[k] = v
		}
	}
	if len(ids) > 0 {
		for chunk := range slices.Chunk(ids, *batch) {
			filter["ids"] = chunk
			if _, err := call(filter); err != nil {
				return err
			}
		}
	} else {
		filter["limit"] = *batch
		for {
			a, err := call(filter)
			if err != nil {
				return err
			}
			if a.NextCursor == nil {
				break
			}
			filter["cursor"] = *a.NextCursor
		}
	}
	if cf.json {
		all.NextCursor = nil
		data, err := json.Marshal(all)
		if err != nil {
			return fmt.Errorf("encode the answer: %w", err)
		}
		printJSON(stdout, data)
		return nil
	}
	fmt.Fprintf(stdout, "%s requeued, %s skipped\n", plural(len(all.Requeued), "waiting job"), plural(len(all.Skipped), "job"))
	return nil
}

// plural is "1 job" or "3 jobs".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
