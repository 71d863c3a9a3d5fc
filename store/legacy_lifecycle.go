package store

// legacyLifecycle is the part of the lifecycle unit (cancel, reopen, reap,
// sweep, queue health) the driver still answers (transitional).
type legacyLifecycle interface{}
