"""OpenLineage registry review bot: the engine, its checks, the GitHub App and the Spark regression."""

__version__ = "0.1.0"
