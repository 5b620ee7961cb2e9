#!/bin/sh
# Build the published registry's Markdown of REPO (default: the real corpus) inside a minimal Docusaurus
# site that throws on broken links and anchors: `make docusaurus-check`. Exit status is the build's.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
corpus=""
dir=$here
while [ "$dir" != "/" ]; do  # shared/ beside the repository, or beside a worktree's parent (as the tests find it)
  dir=$(dirname "$dir")
  if [ -d "$dir/shared/corpus/openlineage" ]; then corpus=$dir/shared/corpus/openlineage; break; fi
done
repo=${1:-$corpus}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$here/../../.venv/bin/python" -m bot publish "$repo" "$work/out"
rm -rf "$here/docs" "$here/static" "$here/build" "$here/.docusaurus"
mkdir -p "$here/docs" "$here/static/registry"
cp -r "$work/out/docusaurus/registry" "$here/docs/"
[ -d "$work/out/logos" ] && cp -r "$work/out/logos" "$here/static/registry/"
echo "User-agent: *" > "$here/static/robots.txt"
printf "# Docs\\n\\nThe [registry](/docs/registry/).\\n" > "$here/docs/intro.md"  # the website has other docs too
cd "$here" && npx docusaurus build
