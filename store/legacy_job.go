package store

// legacyJob is the part of the enqueue unit the driver still answers
// (transitional).
type legacyJob interface{}
