"""GitHub's limits, written once: the client, the in-memory GitHub (``LocalGitHub``, the stand-in)
and the publisher all read them from here (docs/github.md cites where GitHub states each).

Nothing here does I/O; ``bot.outputs.render.markdown.GITHUB_TEXT_LIMIT`` is ``OUTPUT_BYTES``
re-exported for the renderers, which must not import the App.
"""

from __future__ import annotations

ANNOTATIONS_PER_REQUEST = 50  # "Update a check run": at most 50 annotations per request
ANNOTATION_TITLE_CHARS = 255  # an annotation's title: "The maximum size is 255 characters."
# a check run's output.summary and output.text, in UTF-8 bytes: the documentation says characters,
# GitHub answers 422 "summary exceeds a maximum bytesize of 65535" (github/docs#35252)
OUTPUT_BYTES = 65_535
BODY_CHARS = 65_536  # a review, an inline comment, an issue comment
ACTIONS_PER_RUN = 3  # a check run's requested actions
PR_FILES = 3000  # "List pull requests files": at most 3000 files
PER_PAGE = 100  # the largest page of a REST listing
TREE_ENTRIES = 100_000  # a recursive tree is truncated past 100,000 entries
CONTENTS_INLINE_BYTES = 1024 * 1024  # the contents API inlines a file up to 1 MB
# "Get repository content": over 100 MB "this endpoint is not supported" (403, code too_large)
CONTENTS_BYTES = 100 * 1024 * 1024
CONTENT_CREATION_PER_MINUTE = 80  # secondary rate limit ("Rate limits for the REST API")
CONTENT_CREATION_PER_HOUR = 500
