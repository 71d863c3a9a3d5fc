-- Object cache: drop a leftover incomplete tree before writing it again.
WITH f AS (
    DELETE FROM object_file WHERE workspace = @workspace AND source_id = @source_id AND commit_sha = @commit_sha
)
DELETE FROM object_chunk WHERE workspace = @workspace AND source_id = @source_id AND commit_sha = @commit_sha
