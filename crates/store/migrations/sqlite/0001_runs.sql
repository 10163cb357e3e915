-- iomark results store, schema version 1 (SQLite; postgres/0001_runs.sql is
-- the same schema in PostgreSQL's types).
--
-- Every figure is a raw number in base units: times in ms since the Unix
-- epoch, rates in bytes/s or bits/s, latencies in ns, counts as counts.
--
-- schema_migrations  one row per applied migration (created by the code
--                    before the first migration runs; the highest version is
--                    the schema version).
-- runs               one row per run: copies of the document's header for
--                    listing and filtering. `status` is 'interrupted' from the moment a
--                    run starts until it is finished, so a killed run says so.
--                    `kind` is the document's body kind (disk, mem, net);
--                    `target` what it ran on (a path, a host); `device` a
--                    one-line description of the device behind it.
-- run_documents      the full result document of each run (JSON, as
--                    `iomark ... --json` prints it), so nothing is lost. Kept
--                    apart from `runs` so listing reads small rows only.
-- run_labels         the run's labels, one row each, for `--label` filters.
-- figures            the run's comparable numbers (test, metric, unit, value)
--                    with the spread (lowest, highest) over its passes or
--                    intervals when known; `ord` keeps the document's order.
-- warnings           every warning of the run and of its jobs; `scope` names
--                    the job ('' for the run as a whole).
--
-- Child rows go with their run (ON DELETE CASCADE).

CREATE TABLE runs (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    kind            TEXT    NOT NULL,
    tool            TEXT    NOT NULL,
    tool_version    TEXT    NOT NULL,
    command_line    TEXT    NOT NULL,   -- JSON array of strings
    started_at_ms   INTEGER NOT NULL,
    finished_at_ms  INTEGER NOT NULL,
    status          TEXT    NOT NULL CHECK (status IN ('complete', 'interrupted', 'failed')),
    labels          TEXT    NOT NULL,   -- JSON array of strings, sorted
    note            TEXT,
    target          TEXT,
    device          TEXT,
    warning_count   INTEGER NOT NULL,
    schema_version  INTEGER NOT NULL    -- of the document's layout
);
CREATE INDEX runs_started_at ON runs (started_at_ms);

CREATE TABLE run_documents (
    run_id    INTEGER PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
    document  TEXT    NOT NULL
);

CREATE TABLE run_labels (
    run_id  INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    label   TEXT    NOT NULL,
    PRIMARY KEY (run_id, label)
);
CREATE INDEX run_labels_by_label ON run_labels (label, run_id);

CREATE TABLE figures (
    run_id     INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    ord        INTEGER NOT NULL,
    test       TEXT    NOT NULL,
    metric     TEXT    NOT NULL,
    unit       TEXT    NOT NULL,
    value      REAL    NOT NULL,
    spread_lo  REAL,
    spread_hi  REAL,
    PRIMARY KEY (run_id, ord)
);

CREATE TABLE warnings (
    run_id   INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    ord      INTEGER NOT NULL,
    scope    TEXT    NOT NULL,
    kind     TEXT    NOT NULL,
    message  TEXT    NOT NULL,
    PRIMARY KEY (run_id, ord)
);
