-- ApplySync, first: the source must exist. No row lock is needed: the one
-- writer serializes applies.
SELECT id FROM git_source WHERE workspace = :workspace AND id = :id
