-- DeleteSchedule: remove a schedule; its jobs stay.
DELETE FROM schedule WHERE workspace = :workspace AND id = :id
