package store

// legacyQueue is the part of the queue unit the driver still answers
// (transitional): nothing any more, the core answers it (queue.go,
// read.go).
type legacyQueue interface{}
