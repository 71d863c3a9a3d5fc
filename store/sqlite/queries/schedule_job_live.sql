-- FireTick, no-overlap: is the previous tick's job still queued or
-- running? A finished job has left job_queue.
SELECT EXISTS (SELECT 1 FROM job_queue WHERE job_id = :job_id)
