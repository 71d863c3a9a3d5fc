package driver

// QueueExecutor claims, heartbeats, completes and fails jobs, and reads them back.
type QueueExecutor interface {
}
