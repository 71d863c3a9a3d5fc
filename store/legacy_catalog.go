package store

// legacyCatalog is the part of the catalog unit the driver still answers
// (transitional).
type legacyCatalog interface{}
