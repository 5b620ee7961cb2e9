"""Adds to the repository copy REPO a hand-written facet doc, as the website keeps them: it cites
the first core facet's schema URL (`make docusaurus-check`, from check.sh)."""

import json
import sys
from pathlib import Path

repo = Path(sys.argv[1])
schema = sorted((repo / "spec/facets").glob("*.json"))[0]
url = json.loads(schema.read_text(encoding="utf-8"))["$id"]
doc = repo / "website/docs/spec/facets/check" / f"{schema.stem}.md"
doc.parent.mkdir(parents=True, exist_ok=True)
doc.write_text(
    f"---\ntitle: {schema.stem} by hand\n---\n\n"
    f"The facet specification can be found [here]({url}).\n",
    encoding="utf-8",
)
