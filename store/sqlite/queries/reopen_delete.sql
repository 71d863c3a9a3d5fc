-- A reopened job leaves job_completed; guarded on the status it was read
-- with.
DELETE FROM job_completed WHERE job_id = :id AND status = :status
