-- Object cache: the marker, written after every chunk of the tree.
INSERT INTO object_marker (workspace, source_id, commit_sha, files)
VALUES (@workspace, @source_id, @commit_sha, @files)
ON CONFLICT DO NOTHING
