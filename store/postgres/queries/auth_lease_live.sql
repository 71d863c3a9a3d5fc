-- AuthLeaseLive: whether a job is running under this claim token right now,
-- so a WF_TOKEN of an ended (or earlier) claim is refused.
SELECT EXISTS (
    SELECT 1 FROM job_queue
    WHERE job_id = @id AND workspace = @workspace AND claim_token = @token AND running
)
