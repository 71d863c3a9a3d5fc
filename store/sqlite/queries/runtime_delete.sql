-- A job that is no longer running has no runtime row.
DELETE FROM job_runtime WHERE job_id = :id
