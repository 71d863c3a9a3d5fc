package schedule_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/windforce/windforce/schedule"
	"github.com/windforce/windforce/spine"
)

// TestNewRefusesInputNoTickCouldRun: an input the enqueue would refuse at
// every tick (NUL, invalid UTF-8, not JSON) is refused when the schedule is
// made, the same on both databases.
func TestNewRefusesInputNoTickCouldRun(t *testing.T) {
	for _, in := range []string{`{"a":"x\u0000y"}`, "{\"a\":\"\xff\"}", `{"a":`} {
		_, err := schedule.New(schedule.Schedule{Workspace: "ws", App: "hello", Action: "greet", Cron: "* * * * *",
			Input: json.RawMessage(in), Enabled: true}, time.Now())
		if !errors.Is(err, spine.ErrInvalid) {
			t.Errorf("input %q: %v, want ErrInvalid", in, err)
		}
	}
	if _, err := schedule.New(schedule.Schedule{Workspace: "ws", App: "hello", Action: "greet", Cron: "* * * * *",
		Input: json.RawMessage(`{"a":"x\\u0000y"}`), Enabled: true}, time.Now()); err != nil {
		t.Errorf("an escaped backslash before u0000 is ordinary text: %v", err)
	}
}
