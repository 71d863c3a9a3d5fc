package cli

import (
	"github.com/windforce/windforce/console"
	"github.com/windforce/windforce/events/relay"
	"github.com/windforce/windforce/schedule"
	"github.com/windforce/windforce/server"
	"github.com/windforce/windforce/spine"
	"github.com/windforce/windforce/store"
)

// The store core serves every part a windforce process is built from;
// these are checked when the program compiles, never at run time.
var (
	_ spine.Store    = (*store.Store)(nil)
	_ server.Store   = (*store.Store)(nil)
	_ console.Store  = (*store.Store)(nil)
	_ schedule.Store = (*store.Store)(nil)
	_ relay.Store    = (*store.Store)(nil)
)
