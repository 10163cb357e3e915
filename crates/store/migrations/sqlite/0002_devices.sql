-- iomark results store, schema version 2 (SQLite; postgres/0002_devices.sql
-- is the same in PostgreSQL's types): what iomark remembers about a device
-- between runs.
--
-- devices  one row per key: a disk (its serial, else its kernel name), or
--          a disk with a file system and I/O mode for a probe's verdict
--          (DeviceReport::disk_key and probe_key). `rated` is the speed the
--          user gave with --rated (JSON RatedSpeed), `probe` the artefacts
--          probe's verdict (JSON ProbeVerdict) with the run it came from
--          (which may since have been deleted) and when.

CREATE TABLE devices (
    key            TEXT    PRIMARY KEY,
    description    TEXT    NOT NULL,
    rated          TEXT,
    probe          TEXT,
    probe_run_id   INTEGER,
    probe_at_ms    INTEGER,
    updated_at_ms  INTEGER NOT NULL
);
