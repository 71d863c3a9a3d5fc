package driver

// ScheduleExecutor keeps schedules and fires their ticks.
type ScheduleExecutor interface {
}
