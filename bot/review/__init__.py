"""One review: the engine, the composition and its stages, the checks, the regression."""
