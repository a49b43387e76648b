"""The legacy engine objects (CompileEngine, TECompiler) over the pipeline and cache."""
