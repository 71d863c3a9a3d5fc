-- SessionEnd: logout. An ended session keeps its first ended_at.
UPDATE console_session SET ended_at = :now
WHERE id_hash = :id_hash AND ended_at IS NULL
