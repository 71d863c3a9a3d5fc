-- EnqueueInsert with AtCommit: whether the app is still at the pin's
-- source and commit (spine.EnqueueParams.AtCommit), in the write
-- transaction that inserts the job.
SELECT EXISTS (
    SELECT 1 FROM app
    WHERE workspace = :workspace AND app_key = :app_key
      AND git_source_id = :git_source_id AND commit_sha = :commit_sha
)
