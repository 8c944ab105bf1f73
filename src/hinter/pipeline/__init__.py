"""The run: the per-text pipeline's stages, the engine that opens, locks and checks a run folder, suites, the estimate, and the run folder's recorded settings and lock."""
