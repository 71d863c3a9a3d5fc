package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
)

// commandNames are the commands as docs/OPERATIONS.md's "used by" column
// names them.
var commandNames = map[string]command{
	"server": cmdServer, "worker": cmdWorker, "dev": cmdDev, "migrate": cmdMigrate,
	"bench": cmdBench, "client commands": cmdClient, "secrets rotate-key": cmdSecretsRotate,
}

// docRow is one variable of a documented configuration table.
type docRow struct {
	variable, flag string  // flag: "" where the table names none
	cmds           command // the commands the table says read it
	def, devDef    string  // the first `value` of the default column and its "(dev: `…`)"; "" when prose
	file           string
}

// docTables reads the configuration table of docs/OPERATIONS.md (variable
// | used by | meaning | default) and the two tables of docs/WORKERS.md
// (flag | variable | meaning | default): the worker's flags, then, under
// "## The job sandbox", the sandbox's, which are dev's too.
func docTables(t *testing.T) []docRow {
	t.Helper()
	var rows []docRow
	read := func(file string, row func(cells []string, section string) docRow) {
		data, err := os.ReadFile("../../docs/" + file)
		if err != nil {
			t.Fatal(err)
		}
		section := ""
		for _, line := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(line, "## ") {
				section = line
			}
			cells := strings.Split(line, "|")
			if len(cells) != 6 || !isVariableCell(cells[1]) && !isVariableCell(cells[2]) {
				continue
			}
			cells = cells[1:5]
			for i := range cells {
				cells[i] = strings.TrimSpace(cells[i])
			}
			r := row(cells, section)
			r.def, r.devDef = docDefault(cells[3])
			r.file = file
			rows = append(rows, r)
		}
	}
	read("OPERATIONS.md", func(cells []string, _ string) docRow {
		if !isVariableCell(cells[0]) {
			return docRow{}
		}
		var c command
		for _, name := range strings.Split(cells[1], ",") {
			cmd, ok := commandNames[strings.TrimSpace(name)]
			if !ok {
				t.Fatalf("OPERATIONS.md: %s is used by %q, not a command this test knows", cells[0], name)
			}
			c |= cmd
		}
		return docRow{variable: strings.Trim(cells[0], "`"), cmds: c}
	})
	read("WORKERS.md", func(cells []string, section string) docRow {
		if !isVariableCell(cells[1]) || !strings.HasPrefix(cells[0], "`--") {
			return docRow{}
		}
		cmds := cmdWorker
		if strings.Contains(section, "sandbox") {
			cmds = cmdRunner
		}
		return docRow{variable: strings.Trim(cells[1], "`"), flag: strings.Trim(cells[0], "`-"), cmds: cmds}
	})
	var kept []docRow
	for _, r := range rows {
		if r.variable != "" {
			kept = append(kept, r)
		}
	}
	if len(kept) < 40 {
		t.Fatalf("read only %d documented variables: did the tables change shape?", len(kept))
	}
	return kept
}

// isVariableCell is a table cell that is exactly one `WINDFORCE_…`.
func isVariableCell(cell string) bool {
	cell = strings.TrimSpace(cell)
	return strings.HasPrefix(cell, "`WINDFORCE_") && strings.Count(cell, "`") == 2 && strings.HasSuffix(cell, "`")
}

var backquoted = regexp.MustCompile("`([^`]*)`")

// docDefault reads a default cell: "`30s` (dev: `5s`)" is 30s, and 5s in
// dev; prose ("number of CPUs", "none: open") is no default to compare.
func docDefault(cell string) (def, devDef string) {
	if m := backquoted.FindStringSubmatch(cell); m != nil && strings.HasPrefix(cell, "`") {
		def = m[1]
	}
	if _, dev, ok := strings.Cut(cell, "(dev: `"); ok {
		devDef, _, _ = strings.Cut(dev, "`")
	}
	return def, devDef
}

// allCommands are the commands with settings, named as in the docs.
var allCommands = []struct {
	name string
	cmd  command
}{{"server", cmdServer}, {"worker", cmdWorker}, {"dev", cmdDev}, {"migrate", cmdMigrate},
	{"bench", cmdBench}, {"client commands", cmdClient}, {"secrets rotate-key", cmdSecretsRotate}}

// boundFlags registers cmd's settings on a fresh flag set.
func boundFlags(cmd command) (*flagSet, *config) {
	c := &config{}
	fs := newFlagSet("test", io.Discard)
	fs.bind(cmd, c)
	return fs, c
}

// clearSettingsEnv unsets every setting's variable for the test (empty is
// unset), so the environment the tests run in cannot leak into them.
func clearSettingsEnv(t *testing.T) {
	for _, s := range settings {
		t.Setenv(s.variable, "")
	}
}

// TestDocumentedSettings: every variable docs/OPERATIONS.md (and the
// sandbox table of docs/WORKERS.md) lists for a command is a flag of that
// command, named after the variable, with the documented default; and
// every variable a command reads is documented for it.
func TestDocumentedSettings(t *testing.T) {
	docs := docTables(t)
	for _, c := range allCommands {
		fs, _ := boundFlags(c.cmd)
		bound := map[string]string{} // variable → flag
		for _, b := range fs.vars {
			bound[b.variable] = b.flag
		}
		documented := map[string]command{} // variable → the commands any table lists
		for _, row := range docs {
			documented[row.variable] |= row.cmds
			if row.cmds&c.cmd == 0 {
				continue
			}
			name, ok := bound[row.variable]
			if !ok {
				t.Errorf("%s says %s reads %s; it has no flag for it", row.file, c.name, row.variable)
				continue
			}
			want := row.flag
			if want == "" {
				want = flagNameOf(row.variable)
			}
			if name != want {
				t.Errorf("%s: %s is --%s, %s wants --%s", c.name, row.variable, name, row.file, want)
			}
			def := row.def
			if c.cmd == cmdDev && row.devDef != "" {
				def = row.devDef
			}
			if got := fs.Lookup(name).DefValue; def != "" && got != "" && !sameValue(got, def) {
				t.Errorf("%s: --%s defaults to %q, %s says %q", c.name, name, got, row.file, def)
			}
		}
		for v := range bound {
			cmds, ok := documented[v]
			switch {
			case !ok:
				t.Errorf("%s reads %s, which no configuration table documents", c.name, v)
			case cmds&c.cmd == 0:
				t.Errorf("%s reads %s, which the docs do not list for it", c.name, v)
			}
		}
	}
}

// flagNameOf is the flag a variable belongs to: WINDFORCE_MAX_WAIT is
// --max-wait. WINDFORCE_WORKER_NAME is --name, the one exception.
func flagNameOf(variable string) string {
	if variable == "WINDFORCE_WORKER_NAME" {
		return "name"
	}
	return strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(variable, "WINDFORCE_")), "_", "-")
}

// sameValue compares a flag's default with a documented one: durations
// and sizes by value (60s is 1m0s), the rest as text.
func sameValue(a, b string) bool {
	if da, err := time.ParseDuration(a); err == nil {
		db, err := time.ParseDuration(b)
		return err == nil && da == db
	}
	if sa, err := parseSize(a); err == nil {
		sb, err := parseSize(b)
		return err == nil && sa == sb
	}
	return a == b
}

// sample is the i-th value for a setting's type: distinct across
// settings, so two flags filling one field would show, and never a
// default.
func sample(s setting, i int) string {
	switch s.def.(type) {
	case int:
		return fmt.Sprint(1000 + i)
	case float64:
		return fmt.Sprint(float64(i) + 0.25)
	case time.Duration:
		return (time.Duration(1000+i) * time.Millisecond).String()
	case size:
		n := size(1000+i) << 10
		return n.String()
	}
	return fmt.Sprintf("value-%d", i)
}

// TestEveryVariableReachesItsFlag: with every variable of a command set
// at once, each flag holds its own variable's value; given on the command
// line too, the flag wins.
func TestEveryVariableReachesItsFlag(t *testing.T) {
	for _, c := range allCommands {
		t.Run(c.name, func(t *testing.T) {
			clearSettingsEnv(t)
			fromEnv, _ := boundFlags(c.cmd)
			fromArgs, _ := boundFlags(c.cmd)
			var args []string
			for i, s := range settings {
				if s.cmds&c.cmd == 0 {
					continue
				}
				t.Setenv(s.variable, sample(s, i))
				args = append(args, "--"+s.flag+"="+sample(s, i+len(settings)))
			}
			if err := fromEnv.parse(nil); err != nil {
				t.Fatal(err)
			}
			if err := fromArgs.parse(args); err != nil {
				t.Fatal(err)
			}
			for i, s := range settings {
				if s.cmds&c.cmd == 0 {
					continue
				}
				if got := fromEnv.Lookup(s.flag).Value.String(); got != sample(s, i) {
					t.Errorf("%s=%s: --%s is %s", s.variable, sample(s, i), s.flag, got)
				}
				if got, want := fromArgs.Lookup(s.flag).Value.String(), sample(s, i+len(settings)); got != want {
					t.Errorf("%s set and --%s=%s given: the flag is %s, want the flag's", s.variable, s.flag, want, got)
				}
			}
		})
	}
}

// TestBadVariableIsAUsageErrorNamingIt: a variable that does not parse as
// its flag's type stops every command that reads it, naming the variable.
func TestBadVariableIsAUsageErrorNamingIt(t *testing.T) {
	clearSettingsEnv(t)
	for _, s := range settings {
		if _, isString := s.def.(string); isString {
			continue // any text is a string
		}
		t.Setenv(s.variable, "bogus")
		for _, c := range allCommands {
			if s.cmds&c.cmd == 0 {
				continue
			}
			fs, _ := boundFlags(c.cmd)
			err := fs.parse(nil)
			var ue *UsageError
			if !errors.As(err, &ue) || ExitCode(err) != 2 || !strings.Contains(err.Error(), s.variable+`="bogus"`) {
				t.Errorf("%s: %s=bogus gave %v, want a usage error naming the variable", c.name, s.variable, err)
			}
		}
		t.Setenv(s.variable, "")
	}
}

// TestSettingsTable: flag names and variables are unique, every setting
// belongs to a command and says what it means, and every command
// registers its settings without a clash.
func TestSettingsTable(t *testing.T) {
	flags, vars := map[string]bool{}, map[string]bool{}
	for _, s := range settings {
		if flags[s.flag] || vars[s.variable] {
			t.Errorf("setting --%s (%s) is in the table twice", s.flag, s.variable)
		}
		flags[s.flag], vars[s.variable] = true, true
		if s.cmds == 0 || s.help == "" || !strings.HasPrefix(s.variable, "WINDFORCE_") {
			t.Errorf("setting --%s: commands %b, help %q, variable %s", s.flag, s.cmds, s.help, s.variable)
		}
	}
	for _, c := range allCommands {
		boundFlags(c.cmd) // panics on a default of the wrong type or a flag defined twice
	}
}
