package cli

import (
	"flag"
	"fmt"
	"io"
	"os"
	"time"
)

// command is a set of the binary's commands, for the settings each has.
type command uint8

// The commands that read settings; cmdClient is every client command.
const (
	cmdServer command = 1 << iota
	cmdWorker
	cmdDev
	cmdMigrate
	cmdBench
	cmdClient
	cmdSecretsRotate
)

// setting is one configuration value of DESIGN §1: a flag, its WINDFORCE_*
// variable, the commands that have it, and its one default and help. The
// table of them is settings (settings.go).
type setting struct {
	flag     string
	variable string
	cmds     command
	// def is the default, of the type field points to: string, int,
	// float64, time.Duration or size.
	def  any
	help string // what it means; the variable is appended when registered
	// field is the config field the setting fills: *string, *int, ….
	field func(*config) any
	// per holds the default or help some of cmds have instead.
	per []variant
}

// variant is a setting's default or help in some commands, where they
// differ (dev's drain grace, its database derived from --dir).
type variant struct {
	cmds command
	def  any    // nil: the setting's default
	help string // "": the setting's help
}

// in is s as cmd sees it, its variant applied.
func (s setting) in(cmd command) setting {
	for _, v := range s.per {
		if v.cmds&cmd == 0 {
			continue
		}
		if v.def != nil {
			s.def = v.def
		}
		if v.help != "" {
			s.help = v.help
		}
	}
	return s
}

// flagSet is a flag.FlagSet that records the WINDFORCE_* variable of
// every setting registered on it, so the environment is applied by name
// rather than read out of help text.
type flagSet struct {
	*flag.FlagSet
	vars []boundVar
}

// boundVar is a registered setting: its flag and its variable.
type boundVar struct{ flag, variable string }

// newFlagSet is an empty flag set for command name; errors and -h go to
// stderr.
func newFlagSet(name string, stderr io.Writer) *flagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return &flagSet{FlagSet: fs}
}

// bind registers every setting cmd has on fs, each filling its field of c.
func (fs *flagSet) bind(cmd command, c *config) {
	for _, s := range settings {
		if s.cmds&cmd != 0 {
			fs.register(s.in(cmd), c)
		}
	}
}

// register defines s's flag with its default and records its variable.
// A default of the wrong type is a mistake in the settings table, which
// the table tests register for every command.
func (fs *flagSet) register(s setting, c *config) {
	help := s.help + " (" + s.variable + ")"
	switch p := s.field(c).(type) {
	case *string:
		fs.StringVar(p, s.flag, s.def.(string), help)
	case *int:
		fs.IntVar(p, s.flag, s.def.(int), help)
	case *float64:
		fs.Float64Var(p, s.flag, s.def.(float64), help)
	case *time.Duration:
		fs.DurationVar(p, s.flag, s.def.(time.Duration), help)
	case *size:
		*p = s.def.(size)
		fs.Var(p, s.flag, help)
	default:
		panic(fmt.Sprintf("setting %s: field of type %T", s.flag, p))
	}
	fs.vars = append(fs.vars, boundVar{flag: s.flag, variable: s.variable})
}

// applyEnv sets every registered flag whose variable is set and not
// empty. Run it before Parse, so a flag on the command line wins; a
// malformed variable is a usage error that names it.
func (fs *flagSet) applyEnv() error {
	for _, b := range fs.vars {
		v, ok := os.LookupEnv(b.variable)
		if !ok || v == "" {
			continue
		}
		if err := fs.Set(b.flag, v); err != nil {
			return &UsageError{Msg: fmt.Sprintf("%s=%q: %v", b.variable, v, err)}
		}
	}
	return nil
}

// parse applies the environment, then args; a mistake in either (and -h)
// is a usage error.
func (fs *flagSet) parse(args []string) error {
	if err := fs.applyEnv(); err != nil {
		return err
	}
	if err := fs.Parse(args); err != nil {
		return &UsageError{Msg: err.Error()}
	}
	return nil
}
