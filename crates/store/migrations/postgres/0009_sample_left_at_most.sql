-- iomark results store, schema version 9 (postgres; sqlite/0009_sample_left_at_most.sql
-- is the same in the other's types): whether a stored second's `left_ms`
-- is the most the run can still take, because steps it may skip are
-- counted in it (a PTS test's rounds after the first steady window), so a
-- viewer says "at most". 1 when it is, 0 when `left_ms` is the time left;
-- NULL in seconds stored before.

ALTER TABLE run_samples ADD COLUMN left_at_most BIGINT;
