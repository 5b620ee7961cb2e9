"""The CODEOWNERS parser and matcher: GitHub's syntax, its exceptions to gitignore, and its lookup
order."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from bot.core.snapshot import DirSnapshot, MemorySnapshot
from bot.model.codeowners import (
    MAX_BYTES,
    MAX_COMPILED_CHARS,
    TIMED_OUT,
    RootOwners,
    load,
    owner_key,
    owner_kind,
    parse,
    same_owners,
)

GITHUB_DOCS_EXAMPLE = """\
# This is a comment.
*       @global-owner1 @global-owner2
*.js    @js-owner #This is an inline comment.
*.go docs@example.com
*.txt @octo-org/octocats
/build/logs/ @doctocat
docs/*  docs@example.com
apps/ @octocat
/docs/ @doctocat
/scripts/ @doctocat @octocat
**/logs @octocat
/apps/ @octocat
/apps/github
"""


def test_the_github_documentation_example_parses_without_problems() -> None:
    owners = parse(GITHUB_DOCS_EXAMPLE)
    assert owners.problems == ()
    assert [r.line for r in owners.rules] == [2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]
    assert owners.rules[1].owners == ("@js-owner",)  # the inline comment is not an owner


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("README.md", ("@global-owner1", "@global-owner2")),
        ("src/app.js", ("@js-owner",)),
        ("main.go", ("docs@example.com",)),
        ("notes/a.txt", ("@octo-org/octocats",)),
        ("build/logs/today/x.log", ("@octocat",)),  # **/logs comes later and wins
        ("scripts/run.sh", ("@doctocat", "@octocat")),
        ("deeply/nested/logs/x", ("@octocat",)),
        ("apps/main/index.js", ("@octocat",)),
        ("apps/github/index.js", ()),  # matched by a line without owners: owned by no one
    ],
)
def test_last_matching_line_wins(path: str, expected: tuple[str, ...]) -> None:
    assert parse(GITHUB_DOCS_EXAMPLE).owners_of(path) == expected


def test_docs_star_matches_only_direct_children() -> None:
    owners = parse("docs/*  docs@example.com\n")
    assert owners.owners_of("docs/getting-started.md") == ("docs@example.com",)
    assert owners.owners_of("docs/build-app/troubleshooting.md") is None


def test_unmatched_is_not_the_same_as_unowned() -> None:
    owners = parse("/apps/ @octocat\n/apps/github\n")
    assert owners.owners_of("README.md") is None
    assert owners.owners_of("apps/github/x.js") == ()
    assert owners.owners_of("apps/other/x.js") == ("@octocat",)


def test_paths_are_case_sensitive_and_owners_are_not() -> None:
    owners = parse("/Spec/ @Alice\n")
    assert owners.owners_of("spec/x.json") is None
    assert owner_key("@Alice") == owner_key("alice") == "alice"
    assert same_owners(["@OpenLineage/Committers"], ["@openlineage/committers"])
    assert not same_owners(["@a"], ["@a", "@b"])


@pytest.mark.parametrize(
    ("owner", "kind"),
    [
        ("@octocat", "user"),
        ("@octo-cat42", "user"),
        ("@octo-org/octocats", "team"),
        ("@org/team_slug.x", "team"),
        ("docs@example.com", "email"),
        ("octocat", None),
        ("@", None),
        ("@-octocat", None),
        ("@org/", None),
        ("@org/team/sub", None),
        ("docs@example", None),
        ("@" + "a" * 40, None),
    ],
)
def test_owner_syntax(owner: str, kind: str | None) -> None:
    assert owner_kind(owner) == kind


@pytest.mark.parametrize(
    ("owner", "kind"),
    [
        ("@octo_shortcode", "user"),
        ("@mona-the-octocat_acme1", "user"),
        ("@" + "a" * 30 + "_" + "b" * 8, "user"),
        ("@" + "a" * 31 + "_" + "b" * 8, None),  # 40 characters
        ("@_acme", None),
        ("@octo_", None),
        ("@octo_cat_acme", None),
        ("@octo_acme/team", None),  # an organization's name has no underscore
    ],
)
def test_an_enterprise_managed_users_login_is_an_owner(owner: str, kind: str | None) -> None:
    """An Enterprise Managed User's login is the normalized handle, an underscore and the
    enterprise's short code (``octo_shortcode``); GitHub accepts it as a CODEOWNERS owner, so the
    bot does too (before: ``owners/invalid-owner``, and its line skipped)."""
    assert owner_kind(owner) == kind


def test_each_bad_line_is_reported_on_its_line_and_column_and_skipped() -> None:
    text = (
        "* @org/all\n"  # 1 fine
        "# comment\n"  # 2
        "/facets/ octocat\n"  # 3 owner without @
        "!facets/x.json @a\n"  # 4 negation
        "facets/[ab].json @a\n"  # 5 character range
        "\\#notes @a\n"  # 6 escaped #
        "facets/examples/\n"  # 7 no owner: legal
        "  /build/  @a  @b!x\n"  # 8 second owner is bad
        "my\\ notes @a\n"  # 9 fine: an escaped space belongs to the pattern
        "bad\\\n"  # 10 a trailing backslash is not a pattern
    )
    owners = parse(text, "spec/registry/x/CODEOWNERS")
    found = [(p.line, p.column, p.kind) for p in owners.problems]
    assert found == [
        (3, 10, "owner"),
        (4, 1, "pattern"),
        (5, 8, "pattern"),
        (6, 1, "pattern"),
        (8, 16, "owner"),
        (10, 1, "pattern"),
    ]
    assert [r.line for r in owners.rules] == [1, 7, 9]
    assert (
        "negation" in owners.problems[1].message and "character range" in owners.problems[2].message
    )
    # A skipped line does not un-own anything: /facets/ stays with line 1.
    assert owners.owners_of("facets/x.json") == ("@org/all",)
    assert owners.owners_of("docs/my notes") == ("@a",)


@pytest.mark.parametrize("line", ["\\", "\\ ", " \\", "\\\t"])
def test_a_lone_backslash_is_a_syntax_problem_on_its_line(line: str) -> None:
    owners = parse(f"* @org/all\n{line}\n")
    [problem] = owners.problems
    assert (problem.line, problem.kind) == (2, "pattern") and "lone" in problem.message
    assert [r.line for r in owners.rules] == [1]


def test_windows_line_endings_and_a_byte_order_mark() -> None:
    owners = parse("\ufeff* @a\r\n/x/ @b\r\n")
    assert owners.problems == ()
    assert owners.owners_of("x/y") == ("@b",)


def test_a_hostile_pattern_is_bounded_in_time_and_remembered() -> None:
    owners = parse("*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b @x\n")
    started = time.monotonic()
    assert owners.owners_of("a" * 3000) is None
    assert time.monotonic() - started < 2
    assert owners.failed_lines == {1: TIMED_OUT}


def test_lines_past_the_compile_budget_are_refused_and_named() -> None:
    """Patterns that may match anywhere are compiled for every path: past ``MAX_COMPILED_CHARS`` of
    them the rest are refused (an error finding). The last lines are tried first, as GitHub reads
    the file, so the refused are the first."""
    wide = "*" + "/*".join("d" * 8 for _ in range(400))  # 3,999 characters
    count = MAX_COMPILED_CHARS // 4_000 + 10
    owners = parse("".join(f"{wide}{i} @o{i}\n" for i in range(count)))
    assert owners.owners_of("spec/x.json") is None
    refused = sorted(owners.failed_lines)
    assert refused == list(range(1, len(refused) + 1)) and len(refused) >= 10
    assert all(
        "over the bot's limit of 300,000 characters" in owners.failed_lines[n] for n in refused
    )
    widest = max(len(r.expression) for r in owners.rules)
    assert MAX_COMPILED_CHARS - widest < owners.compiled_chars <= MAX_COMPILED_CHARS
    assert owners.owners_of("a/b") is None and sorted(owners.failed_lines) == refused


def test_root_lookup_order_is_github_then_root_then_docs() -> None:
    files = {
        ".github/CODEOWNERS": b"* @from-github\n",
        "CODEOWNERS": b"* @from-root\n",
        "docs/CODEOWNERS": b"* @from-docs\n",
    }
    assert RootOwners.of(MemorySnapshot(files)).owners_of("a") == ("@from-github",)
    del files[".github/CODEOWNERS"]
    assert RootOwners.of(MemorySnapshot(files)).owners_of("a") == ("@from-root",)
    del files["CODEOWNERS"]
    root = RootOwners.of(MemorySnapshot(files))
    assert (root.path, root.owners_of("a")) == ("docs/CODEOWNERS", ("@from-docs",))
    assert RootOwners.of(MemorySnapshot({})).owners_of("a") == ()


def test_the_real_root_codeowners(corpus: Path) -> None:
    root = RootOwners.of(DirSnapshot(corpus))
    assert root.path == "CODEOWNERS" and root.file is not None and root.file.problems == ()
    core = root.rule_for("spec/registry/core/registry.json")
    other = root.rule_for("spec/registry/iceberg/registry.json")
    assert core is not None and other is not None
    assert (core.line, core.owners) == (5, ("@OpenLineage/committers",))
    assert (other.line, other.owners) == (3, ("@OpenLineage/committers",))


def test_a_file_github_would_not_load() -> None:
    snapshot = MemorySnapshot({"CODEOWNERS": b"* @a\n" * (MAX_BYTES // 5 + 1)})
    loaded = load(snapshot, "CODEOWNERS")
    assert loaded is not None and loaded.rules == ()
    assert [p.kind for p in loaded.problems] == ["file"] and "3,145,728" in loaded.problems[
        0
    ].message
    assert load(snapshot, "missing/CODEOWNERS") is None
