"""The published registry: a static site, Docusaurus Markdown and a discovery index, built from one
snapshot.

``build_site(snapshot, config)`` reads the same registry model as the checks (never the network)
into a ``Site`` (``bot.outputs.site.model``); ``write_site`` writes the HTML pages, the schemas
under their ``$id`` paths, the discovery index and the Markdown pages; ``preview`` compares the
sites of two snapshots.
"""

from bot.outputs.site.model import Site, build_site

__all__ = ["Site", "build_site"]
