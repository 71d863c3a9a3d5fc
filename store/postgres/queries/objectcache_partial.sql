-- Object cache: is any of an incomplete tree there?
SELECT EXISTS (SELECT 1 FROM object_file
               WHERE workspace = @workspace AND source_id = @source_id AND commit_sha = @commit_sha)
