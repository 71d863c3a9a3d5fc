-- Object cache: is the tree complete (its marker row present)?
SELECT EXISTS (SELECT 1 FROM object_marker
               WHERE workspace = @workspace AND source_id = @source_id AND commit_sha = @commit_sha)
