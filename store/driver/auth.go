package driver

// AuthExecutor keeps tokens, console sessions, leases and webhook secrets.
type AuthExecutor interface {
}
