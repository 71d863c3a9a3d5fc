package store

// legacyAuth is the part of the auth and webhook unit the driver still
// answers (transitional).
type legacyAuth interface{}
