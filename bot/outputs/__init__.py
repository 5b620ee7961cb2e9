"""What a review is shown as: text, JSON, SARIF and Markdown renderers, the published site."""
