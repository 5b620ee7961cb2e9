"""Naming rule family: the naming files of the reviewed repository are valid, consistent and in
sync.

Runs when a change touches the naming folder (``config.paths.naming``), or on a whole-tree review
when the folder exists. Patterns in the files come from the pull request: they are vetted and every
match made here has a time bound, so a hostile pattern yields a finding, never a hang.
"""

from __future__ import annotations

from collections.abc import Iterator

from bot.core.findings import Finding
from bot.review.input import ReviewInput

RULES: dict[str, str] = {
    "naming/invalid-file": "A naming file cannot be read as JSON (or the folder is too large); it "
    "is skipped.",
    "naming/schema": "A naming file does not follow the base schema (NamingBase.json): the message "
    "names the keyword and the finding sits on the offending value.",
    "naming/unchecked": "A naming file could not be checked against the base schema (past its "
    "time budget, at a reference that does not resolve offline, in a recursion without end): "
    "nothing of it was checked, whatever it holds; or a problem of the file (a base schema error, "
    "a broken form, component or quoting pattern) left the rest of it (its patterns, examples, "
    "decisions, round trips) unchecked. Never waived; pre-existing only where the change touches "
    "neither the file nor NamingBase.json (the same finding on the base says nothing of what a "
    "change wrote in the file).",
    "naming/file-location": "A naming file must live at <naming>/datasets/<id>/<id>.json or "
    "<naming>/jobs/<id>/<id>.json, and its $id must name the same id.",
    "naming/duplicate-id": "Two naming files declare the same source or job id.",
    "naming/shared-scheme": "Two dataset sources use the same scheme; allowed only when both files "
    "say, under sharesScheme, how their identifiers are told apart.",
    "naming/template-syntax": "A namespace or name template cannot be parsed (unbalanced brackets, "
    "bad component names, a component used twice).",
    "naming/undeclared-component": "A template or the quoting rules use a component the file does "
    "not declare.",
    "naming/unused-component": "A component is declared but no template uses it (a warning).",
    "naming/unsafe-pattern": "A component pattern is invalid or can backtrack catastrophically "
    "(nested unbounded quantifiers, backreferences, named groups, over 512 characters), or the "
    "patterns compile too large (a form's joined components, or all naming files together).",
    "naming/slow-pattern": "Matching a form's pattern (each component probed in its place) or a "
    "decision's namespacePattern against a long probe string exceeded the time bound. Decided "
    "once, where the rules are built: the pattern never runs again, on any engine (an "
    "identifier reaching it is invalid, as too slow to match).",
    "naming/round-trip": "A valid example is rejected, parsed as another source, parsed into other "
    "components than it declares, or does not survive format(parse(x)) == x.",
    "naming/invalid-example-accepted": "An invalid example is accepted, or rejected for another "
    "reason than the one it declares.",
    "naming/decision-mismatch": "A recorded decision about a real-world identifier does not match "
    "what the parser concludes.",
    "naming/ambiguous": "An identifier is accepted by two sources and neither file's precedence "
    "says which wins.",
    "naming/docs-out-of-sync": "The committed Naming.md differs from what `registry-bot naming "
    "docs` generates from the files.",
    "naming/scheme-mismatch": "A naming file's `scheme` is the scheme its namespace templates "
    "start with (`postgres` for `postgres://{host}:{port}`).",
    "naming/hierarchy-mismatch": "Each `datasourceHierarchy` item names a component of the "
    "namespace templates, each `namingHierarchy` item a component (or literal word) of the "
    "templates, and `namingHierarchy` runs in the order the templates write its components, "
    "outermost first.",
}


def check(review: ReviewInput) -> Iterator[Finding]:
    folder = review.config.paths.naming.strip("/")
    if review.changes is not None and not review.changes.touches(folder):
        return
    if not review.head.files(folder):
        return
    # the naming library, imported only when there are naming files
    from bot.review.checks._naming import findings

    yield from findings(review, folder)
