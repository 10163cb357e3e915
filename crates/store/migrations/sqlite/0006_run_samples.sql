-- iomark results store, schema version 6 (sqlite; the other's 0006_run_samples.sql
-- is the same in its types): each second of a run's tests, written while
-- the run goes, so a viewer (iomark serve) draws a run in progress from
-- the store alone and a run that was killed keeps what it measured. One
-- row per interval, numbered from 0 within the run (seq). Latencies in ns
-- are empty where the interval completed no I/O.

CREATE TABLE run_samples (
    run_id       INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    seq          INTEGER NOT NULL,
    at_ms        INTEGER NOT NULL,
    step         INTEGER NOT NULL,
    steps        INTEGER NOT NULL,
    label        TEXT NOT NULL,
    offset_ms    INTEGER NOT NULL,
    duration_ms  INTEGER NOT NULL,
    bytes        INTEGER NOT NULL,
    ios          INTEGER NOT NULL,
    lat_mean_ns  INTEGER,
    lat_p50_ns   INTEGER,
    lat_p99_ns   INTEGER,
    lat_max_ns   INTEGER,
    left_ms      INTEGER,
    PRIMARY KEY (run_id, seq)
);

-- Runs in progress are found by their newest sample.
CREATE INDEX run_samples_at ON run_samples (at_ms);
