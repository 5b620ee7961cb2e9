"""The bot's configuration, read from the reviewed repository (base side, never the PR head)."""

from __future__ import annotations

import datetime
import math
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

from bot.core.findings import Finding, Severity
from bot.core.snapshot import Snapshot, SnapshotError
from bot.core.waivers import Waiver, parse_config_section

CONFIG_PATHS = (".github/registry-bot.yml", ".github/registry-bot.yaml")
# the naming folder's base schema (``bot.model.naming.loader.BASE_FILE``)
NAMING_BASE_FILE = "NamingBase.json"
MAX_CONFIG_BYTES = 256 * 1024
MAX_NUMBER = 1e12  # a configured count or number of seconds (finite, and never near float's range)


@dataclass(frozen=True)
class Paths:
    """Where things live in the reviewed repository."""

    registry: str = "spec/registry"
    facets: str = "spec/facets"
    tests: str = "spec/tests"
    naming: str = "spec/naming"
    mirror: str = "website/static/spec"
    spec: str = "spec/OpenLineage.json"
    docs: str = "website/docs"  # the hand-written docs (publish cross-links facet pages with them)

    @property
    def mirror_folder(self) -> str:
        """The published mirror's folder (``website/static/spec``): the one definition the checks,
        the App's ownership rules and ``publish`` share."""
        return self.mirror.strip("/")

    @property
    def mirror_prefix(self) -> str:
        """What every path of the published mirror starts with (``website/static/spec/``)."""
        return self.mirror_folder + "/"

    def mirrored(self, rel: str) -> str:
        """The mirror's copy of ``https://openlineage.io/spec/<rel>``
        (``facets/1-0-0/X.json`` -> ``website/static/spec/facets/1-0-0/X.json``)."""
        return self.mirror_prefix + rel


@dataclass(frozen=True)
class ReviewPolicy:
    """How the App publishes a review."""

    event_on_errors: str = "REQUEST_CHANGES"  # or COMMENT
    max_inline_comments: int = 30
    # the whole review: every check on both sides, every match, the regression
    time_budget_seconds: float = 600.0


# --- regression: where the repository keeps its own events ----------------------------------------
# Globs over the reviewed revision's files (``**`` crosses folders). The defaults find OpenLineage's
# own expected-event fixtures: its integrations' test events (``integration/*/.../tests/``,
# ``src/test/``, ``integrations/``); a file counts when its content has the shape of an event
# (``bot.review.regression.discover``).
DISCOVER_EVENTS = (
    "integration/**/test/**",
    "integration/**/tests/**",
    "integration/**/integrations/**",
)


@dataclass(frozen=True)
class RegressionPolicy:
    """Which sample events the regression reads and how its outcomes count.

    ``events``: more locations (paths, globs, Hadoop URIs) read where the regression runs;
    ``discover``: globs of the repository's own event files (``[]`` turns discovery off).
    """

    events: tuple[str, ...] = ()
    discover: tuple[str, ...] = DISCOVER_EVENTS
    broken: str = "error"
    still_failing: str = "notice"
    unknown_schema: str = "warning"
    undeclared_facet: str = "warning"
    time_budget_seconds: float = 300.0
    enabled: bool = True


# Rules today's real registry does not meet yet: warnings in a whole-tree review (``check --all``).
ADOPTION_GAPS = (
    "owners/missing-codeowners",  # no entry has its own CODEOWNERS yet
    "examples/missing",  # registry facets have no examples yet
    "uris/undeclared",  # core/registry.json does not list every core facet
    "facets/suffix",  # legacy facet names
    # a legacy misspelling (`documentation` for `description`) in a core facet
    "lint/unknown-keyword",
    # core examples naming another facet, OpenLineage.json or versions never published
    "examples/schema-url",
)


@dataclass(frozen=True)
class VerdictPolicy:
    """How findings become a verdict.

    ``adoption_gaps`` are warnings in a whole-tree review. In a change they are errors when the
    change adds them (the registry's rules hold for new content) unless ``adoption_gaps_in_changes``
    is ``warning``, for a registry that adopts the rules gradually.
    """

    adoption_gaps: tuple[str, ...] = ADOPTION_GAPS
    adoption_gaps_in_changes: str = "error"


@dataclass(frozen=True)
class VersionsPolicy:
    """How facet versions are published.

    ``require_published_copy`` names the entries whose new facet versions must be copied into the
    published mirror in the same change; the others are copied at release time (OpenLineage copies
    core facets in the pull request and registry facets when it releases). ``["*"]`` means every
    entry, ``[]`` none.
    """

    require_published_copy: tuple[str, ...] = ("core",)
    # The digit an optional field added to an open object needs: "addition" (what 4 of the 12 such
    # changes of the history used, and the only default that blocks none of them) or "revision"
    # (strict SchemaVer).
    open_model_optional_add: str = "addition"

    def requires_copy(self, entry: str) -> bool:
        return "*" in self.require_published_copy or entry in self.require_published_copy


@dataclass(frozen=True)
class FormattingPolicy:
    """The JSON layout rule (``format/json``): prettier's layout with ``indent`` spaces, or off."""

    enabled: bool = True
    indent: int = 2
    severity: str = "warning"  # or error, notice


@dataclass(frozen=True)
class DelegationPolicy:
    """The App approving on an entry's owners' behalf (docs/owners.md, "Delegated approval").

    ``entries``: the entries (names, shell patterns such as ``gcp/*``) whose owners the App approves
    for; ``[]`` turns delegation off. ``auto_merge``: after approving, enable GitHub's auto-merge
    with ``merge_method`` (``MERGE``, ``SQUASH`` or ``REBASE``).
    """

    approve: bool = True
    entries: tuple[str, ...] = ("*",)
    auto_merge: bool = False
    merge_method: str = "SQUASH"

    def covers(self, entry: str) -> bool:
        import fnmatch

        return self.approve and any(fnmatch.fnmatchcase(entry, pattern) for pattern in self.entries)


@dataclass(frozen=True)
class Config:
    paths: Paths = field(default_factory=Paths)
    review: ReviewPolicy = field(default_factory=ReviewPolicy)
    regression: RegressionPolicy = field(default_factory=RegressionPolicy)
    verdict: VerdictPolicy = field(default_factory=VerdictPolicy)
    versions: VersionsPolicy = field(default_factory=VersionsPolicy)
    formatting: FormattingPolicy = field(default_factory=FormattingPolicy)
    delegation: DelegationPolicy = field(default_factory=DelegationPolicy)
    source: str | None = None  # the file it came from, or None for defaults
    severity: tuple[tuple[str, str], ...] = ()  # (rule, error|warning|notice): bot/core/severity.py
    # future lints: (rule, the day it turns an error)
    becomes_error: tuple[tuple[str, datetime.date], ...] = ()
    waivers: tuple[Waiver, ...] = ()  # registry-wide waivers (bot/review/waiving.py)
    # why the configuration file could not be used, when it could not: the checks then run on the
    # defaults, but nothing the App does on its own (approving, merging) follows from defaults
    unusable: str | None = None

    def watched(self) -> tuple[str, ...]:
        """Folders whose change triggers a full review."""
        p = self.paths
        return (p.registry, p.facets, p.tests, p.naming, p.mirror, p.spec)


class ConfigError(ValueError):
    pass


def _section(cls: type[Any], raw: Any, name: str) -> Any:
    if raw is None:
        return cls()
    if not isinstance(raw, Mapping):
        raise ConfigError(f"'{name}' must be a mapping")
    known = {f.name: f for f in fields(cls)}
    unknown = sorted(set(raw) - set(known))
    if unknown:
        raise ConfigError(f"unknown key(s) in '{name}': {', '.join(map(str, unknown))}")
    values: dict[str, Any] = {}
    for key, value in raw.items():
        default = getattr(cls(), key)
        if isinstance(default, tuple):
            if isinstance(value, str):
                value = (value,)
            if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
                raise ConfigError(f"'{name}.{key}' must be a list of strings")
            value = tuple(value)
        elif isinstance(default, bool):
            if not isinstance(value, bool):
                raise ConfigError(f"'{name}.{key}' must be true or false")
        elif isinstance(default, int | float):
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ConfigError(f"'{name}.{key}' must be a number")
            if not math.isfinite(value) or abs(value) > MAX_NUMBER:
                raise ConfigError(f"'{name}.{key}' must be a finite number under {MAX_NUMBER:g}")
            value = type(default)(value)
        elif not isinstance(value, str):
            raise ConfigError(f"'{name}.{key}' must be a string")
        values[key] = value
    if cls is Paths:
        for key, value in values.items():
            if value.startswith("/") or ".." in value.split("/"):
                raise ConfigError(f"'paths.{key}' must be a path inside the repository")
            values[key] = value.strip("/")
    return cls(**values)


def parse_config(text: str, source: str) -> Config:
    """The configuration ``text`` holds; ``ConfigError`` when it cannot be used (a value YAML or a
    conversion refuses too: ``2027-02-30``, ``.inf``, a 5,000-digit number)."""
    import yaml  # only a repository with a configuration file needs a YAML parser

    try:
        raw = yaml.safe_load(text)
    except (yaml.YAMLError, ValueError, OverflowError, TypeError, RecursionError) as exc:
        raise ConfigError(f"not valid YAML: {exc}") from None
    try:
        return _parsed(raw, source)
    except ConfigError:
        raise
    except (ValueError, OverflowError, TypeError, RecursionError) as exc:
        raise ConfigError(f"a value cannot be used: {type(exc).__name__}: {exc}") from None


def _parsed(raw: Any, source: str) -> Config:
    if raw is None:
        raw = {}
    if not isinstance(raw, Mapping):
        raise ConfigError("the file must hold a mapping")
    unknown = sorted(
        set(raw)
        - {
            "paths",
            "review",
            "regression",
            "verdict",
            "versions",
            "formatting",
            "delegation",
            "severity",
            "waivers",
        }
    )
    if unknown:
        raise ConfigError(f"unknown top-level key(s): {', '.join(map(str, unknown))}")
    verdict = _section(VerdictPolicy, raw.get("verdict"), "verdict")
    if verdict.adoption_gaps_in_changes not in ("error", "warning"):
        raise ConfigError("'verdict.adoption_gaps_in_changes' must be error or warning")
    versions = _section(VersionsPolicy, raw.get("versions"), "versions")
    if versions.open_model_optional_add not in ("addition", "revision"):
        raise ConfigError("'versions.open_model_optional_add' must be addition or revision")
    formatting = _section(FormattingPolicy, raw.get("formatting"), "formatting")
    if formatting.severity not in ("error", "warning", "notice"):
        raise ConfigError("'formatting.severity' must be error, warning or notice")
    if not 1 <= formatting.indent <= 8:
        raise ConfigError("'formatting.indent' must be between 1 and 8")
    delegation = _section(DelegationPolicy, raw.get("delegation"), "delegation")
    if delegation.merge_method not in ("MERGE", "SQUASH", "REBASE"):
        raise ConfigError("'delegation.merge_method' must be MERGE, SQUASH or REBASE")
    return Config(
        delegation=delegation,
        formatting=formatting,
        paths=_section(Paths, raw.get("paths"), "paths"),
        review=_section(ReviewPolicy, raw.get("review"), "review"),
        regression=_section(RegressionPolicy, raw.get("regression"), "regression"),
        verdict=verdict,
        versions=versions,
        source=source,
        severity=_severities(raw.get("severity")),
        becomes_error=_future_lints(raw.get("severity")),
        waivers=_waivers(raw.get("waivers"), source),
    )


def _waivers(raw: Any, source: str) -> tuple[Waiver, ...]:
    try:
        return parse_config_section(raw, source)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None


def _future_lints(raw: Any) -> tuple[tuple[str, datetime.date], ...]:
    """The rules of ``severity`` given as ``{becomes_error: DATE}``: warnings until that day, errors
    from it."""
    out = []
    for rule, level in raw.items() if isinstance(raw, Mapping) else ():
        if not isinstance(level, Mapping):
            continue
        if set(level) != {"becomes_error"}:
            raise ConfigError(
                f"'severity.{rule}' must be error, warning, notice or {{becomes_error: YYYY-MM-DD}}"
            )
        day = level["becomes_error"]
        try:
            day = day if isinstance(day, datetime.date) else datetime.date.fromisoformat(str(day))
        except ValueError:
            raise ConfigError(
                f"'severity.{rule}.becomes_error' must be a date (YYYY-MM-DD)"
            ) from None
        out.append((str(rule), day))
    return tuple(sorted(out))


def _severities(raw: Any) -> tuple[tuple[str, str], ...]:
    """The ``severity`` section: a mapping of rule ids to levels (the ids are checked against the
    checks that run, by ``known_rules_only``)."""
    if raw is None:
        return ()
    if not isinstance(raw, Mapping):
        raise ConfigError("'severity' must be a mapping of rule ids to error, warning or notice")
    out = []
    for rule, level in raw.items():
        if not isinstance(rule, str):
            raise ConfigError(f"'severity' keys must be rule ids, not {rule!r}")
        if isinstance(level, Mapping):  # a future lint (``_future_lints``)
            continue
        if level not in ("error", "warning", "notice"):
            raise ConfigError(f"'severity.{rule}' must be error, warning or notice")
        out.append((str(rule), str(level)))
    return tuple(sorted(out))


def load_config(snapshot: Snapshot | None) -> tuple[Config, list[Finding]]:
    """The configuration of the base side, with findings for a config file that cannot be used.

    A broken config never switches checks off: the defaults apply and the problem is reported. Nor
    does it switch the App's actions on: the defaults' delegation is not used (``Config.unusable``).
    """
    if snapshot is None:
        return Config(), []
    for path in CONFIG_PATHS:
        try:
            config = read_config(snapshot, path)
            if config is None:
                continue
            return config, []
        except (ConfigError, SnapshotError) as exc:
            return Config(source=path, unusable=f"{path}: {exc}"), [
                Finding(
                    rule="config/invalid",
                    severity=Severity.ERROR,
                    path=path,
                    line=1,
                    column=1,
                    message=f"the bot's configuration cannot be used, defaults apply: {exc}",
                    hint="See the README section 'Configuration' for the keys the bot reads.",
                )
            ]
    return Config(), []


def known_rules_only(
    config: Config, known: Collection[str], fixed: Collection[str] = ()
) -> tuple[Config, list[Finding]]:
    """``config`` without the rule ids no running check reports (``severity``,
    ``verdict.adoption_gaps``), nor the ``fixed`` ones (rules saying the review could not finish,
    whose severity no configuration changes), and a finding for each: the id is ignored, the rest
    of the configuration stays in force."""
    # the built-in list names built-in rules: kept, never reported
    defaults = VerdictPolicy().adoption_gaps

    def usable(rule: str) -> bool:
        return rule in known and rule not in fixed

    severity = tuple((rule, level) for rule, level in config.severity if usable(rule))
    future = tuple((rule, day) for rule, day in config.becomes_error if usable(rule))
    gaps = tuple(
        rule
        for rule in config.verdict.adoption_gaps
        if usable(rule) or (rule in defaults and rule not in fixed)
    )
    refused = [
        ("severity", rule)
        for rule, _ in (*config.severity, *config.becomes_error)
        if not usable(rule)
    ]
    refused += [
        ("verdict.adoption_gaps", rule)
        for rule in config.verdict.adoption_gaps
        if not usable(rule) and (rule not in defaults or rule in fixed)
    ]
    if not refused:
        return config, []
    path = config.source or CONFIG_PATHS[0]
    findings = [
        Finding(
            rule="config/invalid",
            severity=Severity.ERROR,
            path=path,
            line=1,
            column=1,
            message=(
                f"'{key}' cannot change {rule}: a review that could not finish never passes; "
                "it is ignored, the rest of the configuration applies"
                if rule in fixed
                else f"unknown rule id in '{key}': {rule}; it is ignored, the rest of the "
                "configuration applies"
            ),
            hint="`registry-bot rules` lists the rule ids; a custom check's rules are those of "
            "its module's RULES.",
        )
        for key, rule in refused
    ]
    return replace(
        config,
        severity=severity,
        becomes_error=future,
        verdict=replace(config.verdict, adoption_gaps=gaps),
    ), findings


def with_paths(config: Config, **paths: str) -> Config:
    return replace(config, paths=replace(config.paths, **paths))


def read_config(snapshot: Snapshot, path: str) -> Config | None:
    """The configuration file ``path`` of ``snapshot`` (None when there is none); ``ConfigError``
    or ``SnapshotError`` when it cannot be used."""
    size = snapshot.size(path)
    if size is None:
        return None
    if size > MAX_CONFIG_BYTES:
        raise ConfigError(f"file is {size:,} bytes, over the {MAX_CONFIG_BYTES:,}-byte limit")
    data = snapshot.read(path) or b""
    return parse_config(data.decode("utf-8", "replace"), path)
