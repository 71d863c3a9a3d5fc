-- ApplySync, first: lock the source's row so applies of one source are
-- serialized, and prove the source exists.
SELECT id FROM git_source WHERE workspace = @workspace AND id = @id FOR UPDATE
