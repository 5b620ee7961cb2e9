#!/bin/sh
# Build the published registry's Markdown of REPO (default: the real corpus) inside a minimal Docusaurus
# site that throws on broken links and anchors, then measures its tables in Chromium (fits.py):
# `make docusaurus-check`. Exit status: 0 when both pass.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
corpus=""
dir=$here
while [ "$dir" != "/" ]; do  # shared/ beside the repository, or beside a worktree's parent (as the tests find it)
  dir=$(dirname "$dir")
  if [ -d "$dir/shared/corpus/openlineage" ]; then corpus=$dir/shared/corpus/openlineage; break; fi
done
repo=${1:-$corpus}
[ -n "$repo" ] || { echo "docusaurus-check: no shared/corpus/openlineage beside the repository: give the registry's folder" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python=$here/../../.venv/bin/python
# a hand-written doc citing the first core facet's schema, as the website's facet docs do: the published
# facet page links it and publish drafts the link back into it (both links must resolve in the build)
cp -r "$repo" "$work/repo" && chmod -R u+w "$work/repo"  # shared/ may be read-only
"$python" "$here/handwritten.py" "$work/repo"
"$python" -m bot publish "$work/repo" "$work/out"
rm -rf "$here/docs" "$here/static" "$here/build" "$here/.docusaurus"
mkdir -p "$here/docs" "$here/static/registry"
cp -r "$work/out/docusaurus/." "$here/docs/"  # the registry's pages and the drafted hand-written doc
[ -d "$work/out/logos" ] && cp -r "$work/out/logos" "$here/static/registry/"
echo "User-agent: *" > "$here/static/robots.txt"
printf "# Docs\\n\\nThe [registry](/docs/registry/).\\n" > "$here/docs/intro.md"  # the website has other docs too
cd "$here" && npx docusaurus build
"$python" "$here/fits.py" "$here/build"  # no table of a facet page scrolls sideways at 1280 or 400 px
