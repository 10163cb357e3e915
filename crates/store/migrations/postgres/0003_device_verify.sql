-- iomark results store, schema version 3 (postgres; sqlite/0003_device_verify.sql
-- is the same in the other's types): the verify profile's last verdict
-- on a device (JSON VerifyVerdict: the size checked and found usable, bad
-- blocks by kind and ranges), the run it came from (which may since have
-- been deleted) and when, so every later run there can say that the
-- device returned wrong data.

ALTER TABLE devices ADD COLUMN verify TEXT;
ALTER TABLE devices ADD COLUMN verify_run_id BIGINT;
ALTER TABLE devices ADD COLUMN verify_at_ms BIGINT;
