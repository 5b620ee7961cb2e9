// A minimal Docusaurus site (the version OpenLineage's website locks) that fails on any broken link, anchor
// or Markdown link: `make docusaurus-check` copies the published registry's Markdown into docs/ and builds it.
module.exports = {
  title: 'registry-bot docs check', url: 'https://example.org', baseUrl: '/',
  onBrokenLinks: 'throw', onBrokenAnchors: 'throw',
  markdown: {hooks: {onBrokenMarkdownLinks: 'throw'}},
  // the published registry.css, as the website adds it: the pages' tables fit instead of scrolling sideways
  presets: [['classic', {docs: {}, blog: false, theme: {customCss: [require.resolve('./docs/registry.css')]}}]],
};
