-- 026-coverage-compiler.sql: the compiler of a coverage row. With clang in
-- the branch's `compilers`, build coverage compiles each touched file with
-- clang (LLVM=1) too, as a row of its own beside gcc's; rows from before
-- are gcc's.
ALTER TABLE coverage ADD COLUMN compiler TEXT NOT NULL DEFAULT 'gcc'
	CHECK (compiler IN ('gcc', 'clang'));
