package server

import "time"

// Streams in these tests re-check their caller often, so revocation is
// seen within a test's patience. Set before any test runs.
func init() { followRecheck = 200 * time.Millisecond }

// PublicMessage is publicMessage, for the test that no driver text leaks.
var PublicMessage = publicMessage
