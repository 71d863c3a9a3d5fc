-- Object cache: the files of a tree, by path.
SELECT path, mode, size FROM object_file
WHERE workspace = @workspace AND source_id = @source_id AND commit_sha = @commit_sha
ORDER BY path COLLATE "C"
