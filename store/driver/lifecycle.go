package driver

// LifecycleExecutor cancels, reopens, reaps and sweeps jobs and reads the
// queue's health.
type LifecycleExecutor interface {
}
