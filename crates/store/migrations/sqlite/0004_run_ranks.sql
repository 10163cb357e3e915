-- iomark results store, schema version 4 (sqlite; postgres/0004_run_ranks.sql
-- is the same in the other's types): the per-rank table of a run across
-- MPI ranks (mpirun -np N iomark disk), one row per rank: its host, target
-- and region, its start and end after the common start (ns), the bytes it
-- moved and its own rates (bytes/s). The run's figures are the merged
-- ones; the document holds the same table with each rank's device chain.

CREATE TABLE run_ranks (
    run_id       INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    rank         INTEGER NOT NULL,
    host         TEXT NOT NULL,
    path         TEXT NOT NULL,
    region_at    INTEGER NOT NULL,
    start_ns     INTEGER NOT NULL,
    end_ns       INTEGER NOT NULL,
    read_bytes   INTEGER NOT NULL,
    write_bytes  INTEGER NOT NULL,
    read_bw      DOUBLE PRECISION NOT NULL,
    write_bw     DOUBLE PRECISION NOT NULL,
    interrupted  INTEGER NOT NULL,
    PRIMARY KEY (run_id, rank)
);
