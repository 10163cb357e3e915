-- iomark results store, schema version 4 (postgres; sqlite/0004_run_ranks.sql
-- is the same in the other's types): the per-rank table of a run across
-- MPI ranks (mpirun -np N iomark disk), one row per rank: its host, target
-- and region, its start and end after the common start (ns), the bytes it
-- moved and its own rates (bytes/s). The run's figures are the merged
-- ones; the document holds the same table with each rank's device chain.

CREATE TABLE run_ranks (
    run_id       BIGINT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    rank         BIGINT NOT NULL,
    host         TEXT NOT NULL,
    path         TEXT NOT NULL,
    region_at    BIGINT NOT NULL,
    start_ns     BIGINT NOT NULL,
    end_ns       BIGINT NOT NULL,
    read_bytes   BIGINT NOT NULL,
    write_bytes  BIGINT NOT NULL,
    read_bw      DOUBLE PRECISION NOT NULL,
    write_bw     DOUBLE PRECISION NOT NULL,
    interrupted  BIGINT NOT NULL,
    PRIMARY KEY (run_id, rank)
);
