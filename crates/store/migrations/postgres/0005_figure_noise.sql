-- iomark results store, schema version 5 (postgres; sqlite/0005_figure_noise.sql
-- is the same in the other's types): each figure's noise band, the range a
-- difference must leave to be real (the samples' range widened to the 95%
-- confidence interval of their mean; iomark_model::figure::noise_band).
-- NULL in runs stored before: their spread is their band, as it was.

ALTER TABLE figures ADD COLUMN noise_lo DOUBLE PRECISION;
ALTER TABLE figures ADD COLUMN noise_hi DOUBLE PRECISION;
