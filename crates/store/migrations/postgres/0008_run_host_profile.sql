-- iomark results store, schema version 8 (postgres; sqlite/0008_run_host_profile.sql
-- is the same in the other's types): the host a run measured on and its
-- profile, copied from the document into `runs` as the other filtered
-- fields are, so `results list --host/--profile` and `iomark serve`'s
-- filters read small rows, not every document (a host no run has read all
-- 10,000 documents of a large store). Filled for the runs stored before.
-- NULL where the document has none (an import without a host).

ALTER TABLE runs ADD COLUMN host TEXT;
ALTER TABLE runs ADD COLUMN profile TEXT;
UPDATE runs SET
    host = (SELECT document::jsonb #>> '{host,hostname}'
            FROM run_documents WHERE run_id = runs.id),
    profile = (SELECT document::jsonb #>> '{body,profile}'
               FROM run_documents WHERE run_id = runs.id);
CREATE INDEX runs_profile ON runs (profile);
