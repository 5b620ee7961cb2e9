"""Stand-ins for the bot's own parts in tests: a check that reports exact lines (``FAKE_CHECKS``)
and a regression stage without pyspark (``review_stage``). GitHub itself is modelled once, by
``bot.github.local.LocalGitHub`` (served over HTTP by ``tests/standin``).
"""

from __future__ import annotations

from typing import Any


def missing_facet_check(review: Any) -> Any:
    """Error on each ``ol:<name>:<file>`` in a changed ``registry.json`` whose facet file is
    missing.

    Stands in for the real rule families in service tests, so that they assert exact lines whatever
    the real checks report. The worker runs it with ``--checks tests.fakes:FAKE_CHECKS``.
    """
    from bot.core.findings import Finding, Severity

    registry = review.config.paths.registry
    for change in review.changes.under(registry) if review.changes else ():
        if not change.path.endswith("/registry.json") or change.status.value == "deleted":
            continue
        text = (review.head.read(change.path) or b"").decode("utf-8", "replace")
        name = change.path[len(registry) + 1 : -len("/registry.json")]
        for number, line in enumerate(text.splitlines(), start=1):
            for uri in (
                part for part in line.replace(",", " ").split('"') if part.startswith("ol:")
            ):
                target = f"{registry}/{'/'.join(uri.split(':')[1:-1])}/facets/{uri.split(':')[-1]}"
                if review.head.size(target) is None:
                    yield Finding(
                        rule="test/missing-facet",
                        severity=Severity.ERROR,
                        path=change.path,
                        line=number,
                        message=f"{uri} names {target}, which does not exist @someone <b>x</b>",
                        entry=name.replace("/", ":"),
                    )


FAKE_CHECKS = (missing_facet_check,)


# -- a regression stage with a known outcome (the real one, bot.review.regression, runs Spark) -----
class FakeRegressionStage:
    """Stands in for ``bot.review.regression.review_stage``: a table section and a warning on line 1
    of each changed ``registry.json``. Counts its instances, so a test sees that the worker builds
    it once."""

    instances = 0

    def __init__(self) -> None:
        type(self).instances += 1
        self.calls = 0

    def __call__(self, base: Any, head: Any, changes: Any, config: Any) -> Any:
        from bot.core.findings import Finding, Section, Severity

        self.calls += 1
        changed = sorted(c.path for c in changes.files if c.path.endswith("/registry.json"))
        findings = [
            Finding(
                rule="regression/undeclared-facet",
                severity=Severity.WARNING,
                path=path,
                line=1,
                message=f"fake regression: a sample event uses a facet {path} does not declare",
            )
            for path in changed
        ]
        table = (
            "| sample events | base | head |\n| --- | --- | --- |\n| fake-stage | 3 valid | 2 "
            "valid |"
        )
        return Section("Regression", table, data={"calls": self.calls}), findings


review_stage = FakeRegressionStage  # what the worker looks up with --regression-module tests.fakes
