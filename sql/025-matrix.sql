-- 025-matrix.sql: the cell a candidate ran in (arch, compiler: the branch's
-- `arches` and `compilers`, kernel-queue/candidates/cell.h). A queue or confirm
-- candidate runs its first cell itself (x86_64/gcc by default: its rows
-- are as before) and each other cell as a child candidate of the same
-- patches (cell_of: the parent), with its own build, boot, test results
-- and comparison against the same cell's tip. NULL arch/compiler is
-- x86_64/gcc, as every candidate was before.
ALTER TABLE candidates ADD COLUMN arch TEXT;
ALTER TABLE candidates ADD COLUMN compiler TEXT;
ALTER TABLE candidates ADD COLUMN cell_of INTEGER REFERENCES candidates(id)
	ON DELETE CASCADE;
-- a cell that could not run (its toolchain missing): why, never a verdict
ALTER TABLE candidates ADD COLUMN not_run TEXT;
CREATE INDEX candidates_cell_of ON candidates(cell_of);
