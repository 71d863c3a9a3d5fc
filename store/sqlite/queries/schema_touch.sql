-- Move a stored schema's used_at forward when an enqueue pins it and it is
-- older than the touch period (pinned_schema.go), never backward.
UPDATE job_schema SET used_at = max(used_at, :used_at) WHERE hash = :hash
