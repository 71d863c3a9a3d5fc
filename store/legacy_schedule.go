package store

// legacySchedule is the part of the schedule unit the driver still answers
// (transitional).
type legacySchedule interface{}
