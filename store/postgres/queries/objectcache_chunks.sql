-- Object cache: the chunks of a tree, in order.
SELECT path, data FROM object_chunk
WHERE workspace = @workspace AND source_id = @source_id AND commit_sha = @commit_sha
ORDER BY path COLLATE "C", seq
