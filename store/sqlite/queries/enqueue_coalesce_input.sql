-- The latest coalesced request's input wins; the job row keeps the
-- generation too, so a finished job still shows how many requests it held.
UPDATE job SET input = :input, generation = :generation WHERE id = :id
