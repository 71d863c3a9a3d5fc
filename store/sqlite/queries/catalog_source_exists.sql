-- ApplySync, first: the source must exist (the one writer serializes applies).
SELECT id FROM git_source WHERE workspace = :workspace AND id = :id
