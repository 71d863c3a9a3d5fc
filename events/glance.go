package events

import "encoding/json"

// Glance is what one line about an event shows of its data (`windforce
// events tail`, the console's recent events): a job's app, action,
// status and error message, or a source's commit and error.
type Glance struct {
	App, Action, Status string
	// Commit is a source event's commit (a job's commit_sha is not shown).
	Commit string
	// Error is the job's error message or the source's error.
	Error string
}

// GlanceOf reads the glance of an event's data, of either shape: a job's
// error is an object with a message, a source's a string. ok is false
// when data is not a JSON object.
func GlanceOf(data json.RawMessage) (g Glance, ok bool) {
	var d struct {
		App, Action, Status, Commit string
		Error                       json.RawMessage
	}
	if json.Unmarshal(data, &d) != nil {
		return Glance{}, false
	}
	g = Glance{App: d.App, Action: d.Action, Status: d.Status, Commit: d.Commit}
	var job struct{ Message string }
	if json.Unmarshal(d.Error, &g.Error) != nil && json.Unmarshal(d.Error, &job) == nil {
		g.Error = job.Message
	}
	return g, true
}
