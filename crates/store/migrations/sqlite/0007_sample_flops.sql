-- iomark results store, schema version 7 (sqlite; postgres/0007_sample_flops.sql
-- is the same in the other's types): the floating-point operations each
-- stored second completed, where its test counts them (iomark mem's
-- stencil and Himeno), so a viewer draws the figure of a kernel that moves
-- no counted bytes. NULL where a test counts none and in seconds stored
-- before.

ALTER TABLE run_samples ADD COLUMN flops REAL;
