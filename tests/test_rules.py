"""Every rule of the entry, uris, facets, lint, examples and versions families: a failing and a
passing case.

Each case is a pull request on a real git repository built from the real OpenLineage corpus: the
base is the corpus as it is; the head adds the valid participant of ``registry_cases`` and then
breaks one thing.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bot.core.changes import ChangeSet
from bot.core.findings import Finding, Report, Severity, State
from bot.core.snapshot import GitSnapshot
from bot.review.checks import all_rules
from bot.review.engine import ReviewContext, review
from tests import registry_cases as rc
from tests.conftest import CORPUS
from tests.gitrepo import Repo, git

ICEBERG = "spec/registry/iceberg/facets/IcebergScanReportInputDatasetFacet.json"
ICEBERG_MIRROR = "website/static/spec/facets/{}/IcebergScanReportInputDatasetFacet.json"
Mutation = Callable[[Repo], None]


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory, corpus: Path) -> Repo:
    return Repo.from_folder(corpus, tmp_path_factory.mktemp("rules") / "openlineage")


def run_pr(
    repo: Repo,
    *mutations: Mutation,
    author: str = "alice",
    approvers: frozenset[str] = frozenset(),
    before: tuple[Mutation, ...] = (),
) -> Report:
    """Apply mutations on a fresh branch from main, commit, and review the branch against main
    (with ``before``: against a branch from main that applies those first)."""
    git(repo.path, "checkout", "-q", "-f", "main")
    git(repo.path, "clean", "-qfdx")
    git(repo.path, "checkout", "-q", "-B", "before")
    for mutate in before:
        mutate(repo)
    repo.commit("before", branch="before")
    git(repo.path, "checkout", "-q", "-B", "case")
    for mutate in mutations:
        mutate(repo)
    repo.commit("case", branch="case")
    try:
        with GitSnapshot(repo.path, "before") as base, GitSnapshot(repo.path, "case") as head:
            changes = ChangeSet.from_git(repo.path, "before", "case")
            return review(
                head=head,
                base=base,
                changes=changes,
                context=ReviewContext(author=author, approvers=approvers),
            )
    finally:
        git(repo.path, "checkout", "-q", "-f", "main")


SVG_NS = "http://www.w3.org/2000/svg"
FAMILIES = ("entry/", "uris/", "facets/", "lint/", "examples/", "versions/")


def of(report: Report, rule: str) -> list[Finding]:
    return [f for f in report.findings if f.rule == rule]


def errors(report: Report) -> list[Finding]:
    """Blocking errors of the families under test (owner approval is tested in its own module)."""
    return [f for f in report.findings if report.is_blocking(f) and f.rule.startswith(FAMILIES)]


# -- mutations -------------------------------------------------------------------------------------


def good(repo: Repo) -> None:
    rc.add_good(repo)


def registry(change: Callable[[dict[str, Any]], Any]) -> Mutation:
    return lambda repo: rc.edit(repo, f"{rc.ENTRY}/registry.json", change)


def facet(change: Callable[[dict[str, Any]], Any]) -> Mutation:
    def apply(repo: Repo) -> None:
        rc.edit(repo, rc.FACET, change)
        # keep the published copy in step: only the targeted rule fires
        rc.edit(repo, rc.MIRROR, change)

    return apply


def use_cases(doc: dict[str, Any], cases: list[str]) -> None:
    """The producer's facets in the object form, its two facets declaring ``cases`` between them
    (each at most 20, as the schema allows)."""
    first, second = doc["producer"]["produced_facets"]
    doc["producer"]["produced_facets"] = {
        first: {"use_cases": cases[::2]},
        second: {"use_cases": cases[1::2]},
    }


def write(path: str, content: str | bytes) -> Mutation:
    return lambda repo: repo.write(path, content)


def delete(path: str) -> Mutation:
    return lambda repo: repo.delete(path)


def move(source: str, target: str) -> Mutation:
    return lambda repo: (repo.path / source).rename(repo.path / target)


def inner(schema: dict[str, Any]) -> dict[str, Any]:
    return schema["$defs"]["AcmeWidgetRunFacet"]["allOf"][1]  # type: ignore[no-any-return]


def rename_facet(new: str) -> Mutation:
    """Rename the acme facet consistently everywhere (file, $defs, $id, registry.json, examples,
    mirror)."""

    def apply(repo: Repo) -> None:
        for path, content in rc.good_files().items():
            repo.delete(path) if (repo.path / path).exists() else None
            repo.write(
                path.replace("AcmeWidgetRunFacet", new), content.replace("AcmeWidgetRunFacet", new)
            )

    return apply


def set_key(key: str) -> Mutation:
    def apply(repo: Repo) -> None:
        facet(lambda s: s.update(properties={key: {"$ref": "#/$defs/AcmeWidgetRunFacet"}}))(repo)
        for path in (rc.EXAMPLE, rc.NEGATIVE):
            rc.edit(
                repo, path, lambda v: {(key if k == "acme_widget" else k): x for k, x in v.items()}
            )
        rc.edit(
            repo,
            rc.NEGATIVE,
            lambda v: v.update({"$expect": {"keyword": "required", "pointer": f"/{key}"}}),
        )

    return apply


ICEBERG_EXAMPLE = {
    "icebergScanReport": {
        "_producer": "https://github.com/apache/iceberg",
        "_schemaURL": "https://openlineage.io/spec/facets/1-0-1/"
        "IcebergScanReportInputDatasetFacet.json",
        "snapshotId": 42,
        "schemaId": 1,
        "projectedFieldNames": ["id"],
    }
}


def iceberg(
    change: Callable[[dict[str, Any]], Any], version: str | None, publish: bool = True
) -> Mutation:
    """Change the real iceberg scan-report facet, optionally bumping its $id (and publishing the
    copy).

    A changed facet needs an example (examples/missing), so one is added with it.
    """

    def apply(repo: Repo) -> None:
        example = copy.deepcopy(ICEBERG_EXAMPLE)  # an example names the version it shows
        example["icebergScanReport"]["_schemaURL"] = ICEBERG_MIRROR.format(
            version or "1-0-1"
        ).replace("website/static/spec/", "https://openlineage.io/spec/")
        repo.write(
            "spec/registry/iceberg/facets/examples/IcebergScanReportInputDatasetFacet/1.json",
            rc.dump(example),
        )

        def edit(schema: dict[str, Any]) -> None:
            change(schema)
            if version:
                schema["$id"] = (
                    f"https://openlineage.io/spec/facets/{version}/IcebergScanReportInputDatasetFacet.json"
                )

        rc.edit(repo, ICEBERG, edit)
        if version and publish:
            repo.write(
                ICEBERG_MIRROR.format(version), (repo.path / ICEBERG).read_text(encoding="utf-8")
            )

    return apply


def iceberg_props(schema: dict[str, Any]) -> dict[str, Any]:
    return schema["$defs"]["IcebergScanReportInputDatasetFacet"]["allOf"][1]  # type: ignore[no-any-return]


def add_optional(schema: dict[str, Any]) -> None:
    iceberg_props(schema)["properties"]["planner"] = {"type": "string"}


def make_required(schema: dict[str, Any]) -> None:
    iceberg_props(schema)["required"] = ["snapshotId"]


def base_ref(version: str) -> Callable[[dict[str, Any]], None]:
    def edit(schema: dict[str, Any]) -> None:
        schema["$defs"]["IcebergScanReportInputDatasetFacet"]["allOf"][0]["$ref"] = (
            f"https://openlineage.io/spec/{version}/OpenLineage.json#/$defs/InputDatasetFacet"
        )

    return edit


def stale_copy(version: str) -> Mutation:
    """A mirror copy of ``version`` that is the published 1-0-1, not the schema."""

    def apply(repo: Repo) -> None:
        repo.write(
            ICEBERG_MIRROR.format(version), (repo.path / ICEBERG_MIRROR.format("1-0-1")).read_text()
        )

    return apply


def example_url(url: str) -> Mutation:
    return lambda repo: rc.edit(repo, rc.EXAMPLE, lambda v: v["acme_widget"].update(_schemaURL=url))


def acme_version(version: str) -> Mutation:
    """The acme facet at ``version`` with an optional field more, published next to 1-0-0."""

    def apply(repo: Repo) -> None:
        rc.edit(
            repo,
            rc.FACET,
            lambda s: (
                inner(s)["properties"].update(color={"type": "string"}),
                s.update({"$id": rc.SCHEMA_URL.replace("1-0-0", version)}),
            ),
        )
        repo.write(
            rc.MIRROR.replace("1-0-0", version), (repo.path / rc.FACET).read_text(encoding="utf-8")
        )

    return apply


# -- the table: rule -> (failing mutations, passing mutations) -------------------------------------

BASE = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/"
CASES: dict[str, tuple[tuple[Mutation, ...], tuple[Mutation, ...]]] = {
    "entry/folder-name": ((good, move(rc.ENTRY, "spec/registry/Acme_Co")), (good,)),
    "entry/missing-registry-json": ((good, delete(f"{rc.ENTRY}/registry.json")), (good,)),
    "entry/unreadable": ((good, write(f"{rc.ENTRY}/registry.json", '{"producer": ')), (good,)),
    "entry/schema": (
        (good, registry(lambda d: d["producer"].update(root_doc_URL="http://acme.example.org"))),
        (good,),
    ),
    "entry/misplaced-facets": (
        (
            good,
            registry(
                lambda d: d["consumer"].update(produced_facets=d["consumer"].pop("consumed_facets"))
            ),
        ),
        (good,),
    ),
    "entry/duplicate-facet": (
        (
            good,
            registry(lambda d: d["producer"]["produced_facets"].append("ol:core:SQLJobFacet.json")),
        ),
        (good,),
    ),
    "entry/acceptance": (
        (
            good,
            registry(lambda d: [d[b].pop("root_doc_URL") for b in ("producer", "consumer")]),
            delete(f"{rc.ENTRY}/facets/examples"),
        ),
        (good,),
    ),
    "entry/name-collision": ((good, move(rc.ENTRY, "spec/registry/ice-berg")), (good,)),
    "entry/logo": (
        (
            good,
            registry(lambda d: d.update(logo="logo.svg")),
            write(f"{rc.ENTRY}/logo.svg", f'<!DOCTYPE svg><svg xmlns="{SVG_NS}"></svg>'),
        ),
        (
            good,
            registry(lambda d: d.update(logo="logo.svg")),
            write(
                f"{rc.ENTRY}/logo.svg", f'<svg xmlns="{SVG_NS}"><rect width="1" height="1"/></svg>'
            ),
        ),
    ),
    "entry/use-cases": (
        (good, registry(lambda d: use_cases(d, [f"case {i}" for i in range(21)]))),
        (good, registry(lambda d: use_cases(d, ["lineage", "Data quality", "gdpr"]))),
    ),
    "entry/blank-name": (
        (good, registry(lambda d: d.update(display_name="\u200b\u3164"))),
        (good, registry(lambda d: d.update(display_name="Acme\u200b"))),
    ),
    "uris/malformed": (
        (good, registry(lambda d: d["producer"]["produced_facets"].append("acme:Nope.json"))),
        (good,),
    ),
    "uris/unknown-name": (
        (
            good,
            registry(
                lambda d: d["producer"]["produced_facets"].append("ol:nosuch:NosuchRunFacet.json")
            ),
        ),
        (good,),
    ),
    "uris/unresolved": (
        (
            good,
            registry(
                lambda d: d["producer"]["produced_facets"].append(
                    "ol:acme:AcmeMissingRunFacet.json"
                )
            ),
        ),
        (good,),
    ),
    "uris/undeclared": (
        (
            good,
            registry(
                lambda d: [
                    d[b][f].remove("ol:acme:AcmeWidgetRunFacet.json")
                    for b, f in (("producer", "produced_facets"), ("consumer", "consumed_facets"))
                ]
            ),
        ),
        (good,),
    ),
    "facets/unreadable": ((good, write(rc.FACET, b'{"$id": "\xff\xfe"}')), (good,)),
    "facets/meta-schema": ((good, facet(lambda s: inner(s).update(type="objekt"))), (good,)),
    "facets/id": (
        (good, facet(lambda s: s.update({"$id": "https://example.com/AcmeWidgetRunFacet.json"}))),
        (good,),
    ),
    "facets/nested-id": (
        (
            good,
            facet(
                lambda s: s["$defs"].update(
                    {"Embedded": {"$id": "https://example.com/Embedded.json", "type": "object"}}
                )
            ),
        ),
        # an "$id" inside a const is data, not a resource
        (good, facet(lambda s: s["$defs"].update({"Data": {"const": {"$id": "x"}}}))),
    ),
    "facets/no-facet": ((good, facet(lambda s: s.pop("properties"))), (good,)),
    "facets/name-mismatch": (
        (
            good,
            facet(
                lambda s: s.update(
                    {
                        "$id": rc.SCHEMA_URL.replace("AcmeWidget", "AcmeGadget"),
                        "$defs": {"AcmeGadgetRunFacet": s["$defs"]["AcmeWidgetRunFacet"]},
                        "properties": {"acme_widget": {"$ref": "#/$defs/AcmeGadgetRunFacet"}},
                    }
                )
            ),
        ),
        (good,),
    ),
    "facets/base": (
        (
            good,
            facet(
                lambda s: s["$defs"]["AcmeWidgetRunFacet"]["allOf"][0].update(
                    {"$ref": BASE + "BaseFacet"}
                )
            ),
        ),
        (good,),
    ),
    "facets/suffix": (
        (
            good,
            facet(
                lambda s: s["$defs"]["AcmeWidgetRunFacet"]["allOf"][0].update(
                    {"$ref": BASE + "JobFacet"}
                )
            ),
        ),
        (good,),
    ),
    "facets/prefix-name": ((rename_facet("WidgetRunFacet"),), (rename_facet("AcmeGizmoRunFacet"),)),
    "facets/prefix-key": ((good, set_key("widget")), (good, set_key("acme_gizmo"))),
    "facets/key-form": ((good, set_key("acmeWidget")), (good, set_key("acme_widgetInfo"))),
    "facets/prefix-taken": (
        (good, set_key("iceberg_widget")),
        (good, set_key("acme_icebergWidget")),
    ),
    "facets/duplicate-key": (
        (good, rename_facet("AcmeOtherRunFacet"), good),
        (
            good,
            rename_facet("AcmeOtherRunFacet"),
            good,
            set_key("acme_widget2"),
            registry(
                lambda d: d["producer"]["produced_facets"].append("ol:acme:AcmeOtherRunFacet.json")
            ),
        ),
    ),
    "facets/duplicate-file": (
        (
            good,
            write(
                f"{rc.ENTRY}/facets/SQLJobFacet.json",
                (CORPUS / "spec/facets/SQLJobFacet.json").read_text(encoding="utf-8"),
            ),
        ),
        (good,),
    ),
    "facets/remote-ref": (
        (
            good,
            facet(
                lambda s: inner(s)["properties"].update(
                    remote={"$ref": "https://schemas.example.com/thing.json"}
                )
            ),
        ),
        (good,),
    ),
    "facets/unresolved-ref": (
        (good, facet(lambda s: inner(s)["properties"].update(missing={"$ref": "#/$defs/Nope"}))),
        (good,),
    ),
    "facets/unverified-ref": (
        (
            good,
            facet(
                lambda s: inner(s)["properties"].update(
                    older={
                        "$ref": "https://openlineage.io/spec/facets/1-0-0/ColumnLineageDatasetFacet.json"
                    }
                )
            ),
            delete("website/static/spec"),
        ),
        (good,),
    ),
    "lint/required-undeclared": (
        (good, facet(lambda s: inner(s).update(required=["widgetID"]))),
        (good,),
    ),
    "lint/unknown-keyword": (
        (
            good,
            facet(
                lambda s: inner(s)["properties"]["settings"].update(
                    documentation="How the widget runs"
                )
            ),
        ),
        (
            good,
            facet(
                lambda s: inner(s)["properties"]["settings"].update(
                    description="How the widget runs"
                )
            ),
        ),
    ),
    "lint/oversized-pattern": (
        (
            good,
            facet(
                lambda s: inner(s)["properties"].update(
                    code={"type": "string", "pattern": "((((a{64}){64}){64}){64})"}
                )
            ),
        ),
        (
            good,
            facet(
                lambda s: inner(s)["properties"].update(
                    code={"type": "string", "pattern": "(a{64}){64}"}
                )
            ),
        ),
    ),
    "lint/unknown-format": (
        (good, facet(lambda s: inner(s)["properties"]["widgetId"].update(format="regexp"))),
        (good, facet(lambda s: inner(s)["properties"]["widgetId"].update(format="regex"))),
    ),
    "examples/unverified": (
        (
            good,
            facet(
                lambda s: inner(s)["properties"].update(
                    older={
                        "$ref": "https://openlineage.io/spec/facets/1-0-0/ColumnLineageDatasetFacet.json"
                    }
                )
            ),
            lambda r: rc.edit(
                r, rc.EXAMPLE, lambda v: v["acme_widget"].update(older={"fields": {}})
            ),
            delete("website/static/spec"),
        ),
        (good,),
    ),
    "examples/missing": ((good, delete(f"{rc.ENTRY}/facets/examples")), (good,)),
    "examples/unreadable": ((good, write(rc.EXAMPLE, b'{"acme_widget": "\xc3\x28"}')), (good,)),
    "examples/invalid": (
        (
            good,
            lambda r: rc.edit(
                r, rc.EXAMPLE, lambda v: v["acme_widget"]["settings"]["labels"].__setitem__(1, 5)
            ),
        ),
        (good,),
    ),
    "examples/unknown-key": (
        (good, lambda r: rc.edit(r, rc.EXAMPLE, lambda v: {"acme_widgte": v["acme_widget"]})),
        (good,),
    ),
    "examples/negative-passes": ((good, write(rc.NEGATIVE, rc.dump(rc.EXAMPLE_JSON))), (good,)),
    "examples/negative-wrong-error": (
        (
            good,
            lambda r: rc.edit(
                r,
                rc.NEGATIVE,
                lambda v: v.update(
                    {"$expect": {"keyword": "type", "pointer": "/acme_widget/settings"}}
                ),
            ),
        ),
        (good,),
    ),
    "examples/timeout": (
        (
            good,
            facet(
                lambda s: inner(s)["properties"]["settings"]["properties"]["labels"][
                    "items"
                ].update(pattern="^(?=a)(a|aa)+$")  # refused by the linear engine
            ),
            lambda r: rc.edit(
                r,
                rc.EXAMPLE,
                lambda v: v["acme_widget"]["settings"].update(labels=["a" * 40 + "b"] * 20),
            ),
        ),
        (good,),
    ),
    "examples/unresolved-ref": (
        (
            good,
            facet(
                lambda s: inner(s)["properties"].update(
                    gone={"$ref": "https://openlineage.io/spec/facets/1-0-0/AcmeGoneRunFacet.json"}
                )
            ),
            lambda r: rc.edit(r, rc.EXAMPLE, lambda v: v["acme_widget"].update(gone=1)),
        ),
        (good,),
    ),
    "examples/recursion": (
        (
            good,
            facet(
                lambda s: (
                    s["$defs"].update(Loop={"allOf": [{"$ref": "#/$defs/Loop"}], "type": "string"}),
                    inner(s)["properties"].update(loop={"$ref": "#/$defs/Loop"}),
                )
            ),
            lambda r: rc.edit(r, rc.EXAMPLE, lambda v: v["acme_widget"].update(loop=1)),
        ),
        (good,),
    ),
    "examples/unchecked": (
        (
            good,
            facet(lambda s: inner(s)["properties"]["settings"].update(type=5)),  # not a schema
            lambda r: rc.edit(
                r, rc.EXAMPLE, lambda v: v["acme_widget"]["settings"].update(retries=1)
            ),
        ),
        (good,),
    ),
    "examples/orphan": (
        (good, write(f"{rc.ENTRY}/facets/examples/AcmeNopeRunFacet/1.json", "{}")),
        (good,),
    ),
    "examples/schema-url": (
        (good, example_url("https://openlineage.io/spec/facets/1-0-0/SQLJobFacet.json")),
        (good, example_url(f"{rc.SCHEMA_URL}#/$defs/AcmeWidgetRunFacet")),
    ),
    "examples/stale-schema-url": (
        (good, acme_version("1-0-1")),
        (good, acme_version("1-0-1"), example_url(rc.SCHEMA_URL.replace("1-0-0", "1-0-1"))),
    ),
    "examples/undeclared-field": (
        (
            good,
            lambda r: rc.edit(r, rc.EXAMPLE, lambda v: v["acme_widget"].update(widget_id="w-42")),
        ),
        (good,),
    ),
    "versions/not-bumped": ((iceberg(add_optional, None),), (iceberg(add_optional, "1-0-2"),)),
    "versions/insufficient-bump": (
        (iceberg(make_required, "1-0-2"),),
        (iceberg(make_required, "2-0-0"),),
    ),
    "versions/not-increased": (
        (iceberg(add_optional, "1-0-0", publish=False),),
        (iceberg(add_optional, "1-0-2"),),
    ),
    "versions/not-published": (
        (iceberg(add_optional, "1-0-2", publish=False), stale_copy("1-0-2")),
        (iceberg(add_optional, "1-0-2", publish=False),),
    ),
    "versions/ref-not-compared": (
        (iceberg(base_ref("9-9-9"), "1-0-2"),),
        (iceberg(base_ref("2-0-0"), "1-0-2"),),
    ),
    "versions/published-modified": (
        (lambda r: rc.edit(r, ICEBERG_MIRROR.format("1-0-1"), lambda s: s.update(title="edited")),),
        (iceberg(add_optional, "1-0-2"),),
    ),
    # 1-0-1 renamed 1-0-0's `filter`; bringing it back as an integer passes against 1-0-1, breaks
    # 1-0-0 data
    "versions/transitive-break": (
        (
            iceberg(
                lambda s: iceberg_props(s)["properties"].update(filter={"type": "integer"}), "1-0-2"
            ),
        ),
        (iceberg(add_optional, "1-0-2"),),
    ),
    "versions/forward-break": (
        (
            iceberg(
                lambda s: iceberg_props(s)["properties"]["snapshotId"].update(
                    type=["number", "string"]
                ),
                "1-0-2",
            ),
        ),
        (iceberg(add_optional, "1-0-2"),),
    ),
    "versions/codegen": (
        (
            iceberg(
                lambda s: iceberg_props(s)["properties"].update(
                    schemaIdentifier=iceberg_props(s)["properties"].pop("schemaId")
                ),
                "2-0-0",
            ),
        ),
        (iceberg(add_optional, "1-0-2"),),
    ),
    "versions/over-bump": ((iceberg(add_optional, "2-0-0"),), (iceberg(add_optional, "1-1-0"),)),
    "versions/skipped": ((iceberg(add_optional, "1-0-5"),), (iceberg(add_optional, "1-0-2"),)),
}
WARNING_RULES = {
    "facets/key-form",
    "examples/orphan",
    "facets/unverified-ref",
    "examples/unverified",
}
NOTICE_RULES = {
    "versions/ref-not-compared",
    "versions/forward-break",
    "versions/codegen",
    "versions/over-bump",
    "versions/skipped",
}


def test_every_rule_of_these_families_has_cases() -> None:
    documented = {r for r in all_rules() if r.startswith(FAMILIES)} - {"entry/legacy-key"}
    assert documented == set(CASES)


@pytest.mark.parametrize("rule", sorted(CASES))
def test_rule_fails_on_the_broken_change(repo: Repo, rule: str) -> None:
    report = run_pr(repo, *CASES[rule][0])
    found = of(report, rule)
    assert found, f"{rule} did not fire; got {[f.rule for f in report.findings]}"
    expected = (
        Severity.WARNING
        if rule in WARNING_RULES
        else Severity.NOTICE
        if rule in NOTICE_RULES
        else Severity.ERROR
    )
    assert {f.severity for f in found} == {expected}
    assert all(f.path and f.message for f in found)
    if rule.startswith("versions/"):  # every verdict on a version says at which level it breaks
        assert all(f.to_json()["category"] in ("data", "wire", "codegen") for f in found)


@pytest.mark.parametrize("rule", sorted(CASES))
def test_rule_passes_on_the_correct_change(repo: Repo, rule: str) -> None:
    report = run_pr(repo, *CASES[rule][1])
    assert of(report, rule) == []
    assert errors(report) == []


def test_the_good_participant_passes_cleanly(repo: Repo) -> None:
    # root owners approve a new name
    report = run_pr(repo, good, approvers=frozenset({"OpenLineage/committers"}))
    assert report.verdict.value == "success"
    assert "acme" in report.entries
    # Only the root-routing warning remains: the base branch's root CODEOWNERS cannot know acme yet.
    assert {f.rule for f in report.findings if f.entry == "acme"} == {"owners/root-mismatch"}


def test_type_error_deep_in_an_example_is_on_its_exact_line(repo: Repo) -> None:
    report = run_pr(
        repo,
        good,
        lambda r: rc.edit(
            r, rc.EXAMPLE, lambda v: v["acme_widget"]["settings"]["labels"].__setitem__(1, 5)
        ),
    )
    (error,) = of(report, "examples/invalid")
    assert error.pointer == "/acme_widget/settings/labels/1"
    modified = copy.deepcopy(rc.EXAMPLE_JSON)
    modified["acme_widget"]["settings"]["labels"][1] = 5
    lines = json.dumps(modified, indent=2).splitlines()
    expected_line = next(i for i, line in enumerate(lines, 1) if line.strip() == "5")
    assert (error.line, error.column) == (expected_line, lines[expected_line - 1].index("5") + 1)
    assert "5 is not of type 'string'" in error.message


def test_legacy_key_is_a_warning_even_when_touched(repo: Repo) -> None:
    report = run_pr(
        repo,
        good,
        registry(lambda d: d["producer"].update(root_doc_url=d["producer"].pop("root_doc_URL"))),
    )
    (legacy,) = of(report, "entry/legacy-key")
    assert legacy.severity is Severity.WARNING
    assert of(report, "entry/schema") == []


def test_version_bump_needs_the_right_part_and_names_the_reason(repo: Repo) -> None:
    report = run_pr(repo, iceberg(make_required, "1-0-2"))
    (finding,) = of(report, "versions/insufficient-bump")
    assert (
        "snapshotId" in finding.message and "MODEL" in finding.message and "2-0-0" in finding.hint
    )


def test_untouched_entries_do_not_fail_a_change(repo: Repo) -> None:
    """Core misses examples and declarations today: a change elsewhere still passes."""
    report = run_pr(repo, good)
    assert not [f for f in report.findings if f.entry == "core" and f.severity is Severity.ERROR]


# A change that deletes or renames a facet other entries declare breaks their declarations: the
# references it leaves unresolved are its own new findings, on the declaring entry's registry.json,
# though that entry is not touched (its owners are not asked: the author keeps the facet or updates
# the declarations in the same change). On the real corpus gcp:lineage consumes gcp:dataproc's
# GcpDataprocRunFacet, as it did when #3167 renamed that facet and updated gcp/lineage/registry.json
# in the same pull request.
DATAPROC = "spec/registry/gcp/dataproc"
FACET = f"{DATAPROC}/facets/GcpDataprocRunFacet.json"
URI = "ol:gcp:dataproc:GcpDataprocRunFacet.json"
LINEAGE = "spec/registry/gcp/lineage/registry.json"


def declared(path: str, change: Callable[[list[str]], Any]) -> Mutation:
    """Edit the facet list of a registry.json (its producer's, else its consumer's)."""

    def edit(value: Any) -> None:
        block = value.get("producer") or value["consumer"]
        change(block.get("produced_facets", block.get("consumed_facets")))

    return lambda repo: repo.edit_json(path, edit)


def delete_facet(repo: Repo) -> None:
    repo.delete(FACET)
    declared(f"{DATAPROC}/registry.json", lambda facets: facets.remove(URI))(repo)


def uri_findings(report: Report) -> list[Finding]:
    return [f for f in report.findings if f.rule.startswith("uris/")]


def test_deleting_a_facet_another_entry_declares_blocks_on_that_declaration(repo: Repo) -> None:
    report = run_pr(repo, delete_facet)
    [finding] = uri_findings(report)
    assert (finding.rule, finding.path, finding.pointer, finding.entry, finding.state) == (
        "uris/unresolved",
        LINEAGE,
        "/consumer/consumed_facets/1",
        "gcp:lineage",
        State.NEW,
    )
    # it blocks, and nothing else does but the approval of gcp:dataproc's own owners
    assert [f for f in report.findings if report.is_blocking(f) and f.entry != "gcp:dataproc"] == [
        finding
    ]
    assert f"{URI}: {FACET} does not exist: this change deletes it" in finding.message
    assert "gcp:lineage still declares it in consumed_facets" in finding.message
    assert finding.line == 4  # the consumed_facets line of gcp/lineage/registry.json
    # gcp:lineage is not touched: its owners are not asked, the author fixes the change
    assert report.entries == ("gcp:dataproc",)
    assert "gcp:lineage" not in report.required_approvals()


def test_renaming_a_declared_facet_names_the_new_file(repo: Repo) -> None:
    renamed = f"{DATAPROC}/facets/GcpDataprocClusterRunFacet.json"

    def rename(r: Repo) -> None:
        git(r.path, "mv", FACET, renamed)
        declared(
            f"{DATAPROC}/registry.json",
            lambda facets: facets.__setitem__(0, "ol:gcp:dataproc:GcpDataprocClusterRunFacet.json"),
        )(r)

    [finding] = [f for f in uri_findings(run_pr(repo, rename)) if f.path == LINEAGE]
    assert finding.rule == "uris/unresolved" and finding.state is State.NEW
    assert f"this change renames it to {renamed}" in finding.message


def test_deleting_the_entry_blocks_on_the_names_others_declare(repo: Repo) -> None:
    report = run_pr(repo, lambda r: r.delete(DATAPROC))
    [finding] = uri_findings(report)
    assert (finding.rule, finding.path, finding.state) == ("uris/unknown-name", LINEAGE, State.NEW)
    assert "not a registered name: this change deletes it" in finding.message


def test_the_declaring_entry_updated_in_the_same_change_passes(repo: Repo) -> None:
    """As #3167 did: the facet goes, and so does its declaration in gcp/lineage/registry.json."""
    report = run_pr(repo, delete_facet, declared(LINEAGE, lambda facets: facets.remove(URI)))
    assert uri_findings(report) == []


def test_pre_existing_references_of_untouched_entries_stay_out(repo: Repo) -> None:
    """gcp:lineage already declares a facet that does not exist: a change that leaves its facets
    alone does not report it, and one that deletes another facet reports only that one."""
    broken = "ol:gcp:dataproc:GcpDataprocGoneRunFacet.json"
    already = (declared(LINEAGE, lambda facets: facets.append(broken)),)

    def edit_iceberg(r: Repo) -> None:
        r.edit_json(
            "spec/registry/iceberg/registry.json",
            lambda v: v["producer"].update(root_doc_URL="https://iceberg.apache.org/docs/"),
        )

    assert uri_findings(run_pr(repo, edit_iceberg, before=already)) == []
    [finding] = uri_findings(run_pr(repo, delete_facet, before=already))
    assert (finding.pointer, finding.state) == ("/consumer/consumed_facets/1", State.NEW)
