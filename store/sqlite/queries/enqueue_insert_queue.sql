-- Insert the live queue row of a job that waits for its first (or, after a
-- reopen, its next) claim: attempt 1, restarts 0, generation 1.
INSERT INTO job_queue (
    job_id, workspace, app_key, action_key, tag, priority, scheduled_for, coalesce_key)
VALUES (
    :id, :workspace, :app_key, :action_key, :tag, :priority, :scheduled_for, :coalesce_key)
