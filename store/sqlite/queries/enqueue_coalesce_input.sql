-- The latest coalesced request's input wins.
UPDATE job SET input = :input WHERE id = :id
