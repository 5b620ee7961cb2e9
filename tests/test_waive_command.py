"""``/registry-bot waive``: from anyone, a proposal in one reply comment; never a change of
state."""

from __future__ import annotations

import datetime
import json
import time
from pathlib import Path
from typing import Any

import pytest

from bot.github.events import WAIVE_COMMAND, Job, decide
from bot.github.local import LocalGitHub
from bot.github.waiver_proposal import parse, reply_marker
from bot.service.queue import JobQueue, make_huey
from bot.service.worker import Worker
from tests.conftest import PAYLOADS
from tests.fakes import FAKE_CHECKS
from tests.gitrepo import Repo, git
from tests.test_conclude import Factory
from tests.test_pipeline import REPO, load, make_pr_repo

NOW = datetime.datetime(2026, 6, 1, 12, tzinfo=datetime.UTC).timestamp()


def comment_payload(body: str, login: str) -> dict[str, Any]:
    payload: dict[str, Any] = json.loads(
        (PAYLOADS / "issue_comment.created.on-pull-request.json").read_text()
    )
    payload["comment"]["body"] = body
    payload["comment"]["user"]["login"] = login
    return payload


def entry_facet(repo: Repo) -> str:
    facet = next(
        p
        for p in sorted((repo.path / "spec/registry").rglob("facets/*.json"))
        if "core" not in p.parts
    )
    return facet.relative_to(repo.path).as_posix()


def answered(repo: Repo, command: str, login: str, permission: str) -> LocalGitHub:
    """The stand-in GitHub of ``repo``'s pull request once the worker answered ``command``, a
    comment by ``login`` (who has ``permission`` on the repository)."""
    decision = decide("issue_comment", "d-1", comment_payload(command, login))
    assert decision.job is not None
    gh = LocalGitHub(
        repo.path,
        "main",
        "pr",
        repo=decision.job.repo,
        number=decision.job.number,
        permissions={login: permission},
    )

    class Factory:
        def for_installation(self, installation_id: int) -> LocalGitHub:
            return gh

    assert Worker(Factory(), clock=lambda: NOW).handle(decision.job) == "proposed"
    return gh


@pytest.mark.parametrize("who", ["admin", "write", "read", "none"])
def test_a_waive_command_from_anyone_only_answers(tmp_path: Path, corpus: Path, who: str) -> None:
    repo = Repo.from_folder(corpus, tmp_path / "openlineage")
    facet = entry_facet(repo)
    repo.change({facet: (repo.path / facet).read_text() + "\n"})
    refs = git(repo.path, "for-each-ref")
    command = f"{WAIVE_COMMAND} examples/missing {facet}# the examples come with the next release"
    decision = decide("issue_comment", "d-1", comment_payload(f"please\n{command}\n", "commenter"))
    assert (
        decision.job is not None
        and decision.job.command == command
        and decision.job.requester == "commenter"
    )
    gh = answered(repo, command, "commenter", who)
    # the reply; no check run, review, merge or file
    assert gh.methods_written() == ["create_issue_comment"]
    assert gh.check_runs == [] and git(repo.path, "for-each-ref") == refs
    [reply] = gh.issue_comments
    waiver = json.loads(reply.body.split("```json\n", 1)[1].split("```", 1)[0])
    assert waiver["path"] == facet and waiver["pointer"] == "" and waiver["expires"] == "2026-08-30"
    folder = facet.rsplit("/facets/", 1)[0]
    assert f"`{folder}/waivers.json`" in reply.body and "changes nothing" in reply.body


def test_a_comment_without_the_command_or_with_a_bad_one() -> None:
    assert (
        decide("issue_comment", "d-2", comment_payload("/registry-bot waiver x", "a")).job is None
    )
    by_a_bot = comment_payload(f"{WAIVE_COMMAND} a/b c.json# d", "registry-bot[bot]")
    by_a_bot["comment"]["user"]["type"] = "Bot"
    assert decide("issue_comment", "d-3", by_a_bot).job is None
    assert isinstance(parse(f"{WAIVE_COMMAND} examples/missing"), str)
    assert isinstance(parse(f"{WAIVE_COMMAND} examples/missing /etc/passwd# because"), str)
    wanted = parse(
        f"{WAIVE_COMMAND} facets/key-form spec/registry/x/facets/A.json#/properties/a_b  key in use"
    )
    assert (
        not isinstance(wanted, str)
        and wanted.pointer == "/properties/a_b"
        and wanted.reason == "key in use"
    )


def test_a_deep_path_costs_one_listing_not_a_read_per_folder(tmp_path: Path, corpus: Path) -> None:
    """A place 965 folders deep (a comment under the 2,000-character cap): the proposal reads the
    configuration and lists the registry folder once (and the comments, for its own earlier
    reply). Before, it read ``registry.json`` at every depth: 967 requests for one comment from
    anyone."""
    repo = Repo.from_folder(corpus, tmp_path / "openlineage")
    repo.change({"README.md": "x\n"})
    deep = "spec/registry/" + "a/" * 965 + "x.json"
    facet = entry_facet(repo)
    replies = []
    for path in (deep, f"{facet.rsplit('/facets/', 1)[0]}/facets/examples/X/a/b/c.json"):
        command = f"{WAIVE_COMMAND} examples/missing {path}# because"
        assert len(command) <= 2000
        job = decide("issue_comment", "d-1", comment_payload(command, "stranger")).job
        assert job is not None
        gh = LocalGitHub(repo.path, "main", "pr", repo=job.repo, number=job.number)

        class Factory:
            def for_installation(self, installation_id: int, gh: LocalGitHub = gh) -> LocalGitHub:
                return gh

        assert Worker(Factory(), clock=lambda: NOW).handle(job) == "proposed"
        reads = [c for c in gh.calls if c.startswith(("read_", "list_", "get_"))]
        # the pull request, the configuration, one listing, and the comments (answered already?)
        assert reads.count("read_tree") == 1 and len(reads) <= 5, reads
        [reply] = gh.issue_comments
        replies.append(reply.body)
    assert "`.github/registry-bot.yml (waivers:)`" in replies[0]
    assert f"`{facet.rsplit('/facets/', 1)[0]}/waivers.json`" in replies[1]


class Killed(BaseException):
    """The process dies (kill -9, the OOM killer): nothing of it catches this."""


def waive_job(delivery: str, number: int) -> Job:
    return Job(
        delivery,
        "issue_comment",
        "created",
        1,
        REPO,
        number,
        requester="someone",
        command=f"{WAIVE_COMMAND} examples/missing spec/registry/gcp/lineage/registry.json# later",
    )


def test_a_waive_reply_is_posted_once_when_its_job_runs_again(tmp_path: Path, corpus: Path) -> None:
    """Finding: the reply carried no marker and nothing looked for an earlier one, so a job run
    again after GitHub took its reply (the process died right after the POST; the queue's Redis
    stalled and the job was waited out) answered a second time. The reply carries its delivery in a
    hidden marker, and a job that finds the App's comment with it posts nothing."""

    class Dying(LocalGitHub):
        killed = False

        def create_issue_comment(self, repo: str, number: int, body: str) -> int:
            comment = super().create_issue_comment(repo, number, body)
            if not Dying.killed:
                Dying.killed = True
                raise Killed  # the process dies once GitHub has the comment
            return comment

    gh, pr = load(make_pr_repo(tmp_path, corpus), github=Dying)
    db = str(tmp_path / "queue.sqlite3")

    def worker_process() -> JobQueue:
        queue = JobQueue(make_huey(db), lease_ttl=0.5)
        queue.set_handler(Worker(Factory(gh), checks=FAKE_CHECKS, done=queue.is_done).handle)
        return queue

    first = worker_process()
    assert first.accept(waive_job("d-waive", pr.number))
    with pytest.raises(Killed):
        first.huey.execute(first.huey.dequeue())
    assert not first.is_done("d-waive")
    time.sleep(0.6)  # the dead process's lease lapses
    second = worker_process()
    assert second.recover() == 1
    second.huey.execute(second.huey.dequeue())
    assert second.is_done("d-waive")
    [reply] = [c for c in gh.issue_comments if "Proposed waiver" in c.body]
    assert reply_marker("d-waive") in reply.body
    # a waive command of another delivery (another comment) is answered
    assert Worker(Factory(gh)).handle(waive_job("d-other", pr.number)) == "proposed"
    assert len([c for c in gh.issue_comments if "Proposed waiver" in c.body]) == 2
    # a comment of someone else quoting the marker does not stop the reply
    gh.add_issue_comment("someone", reply_marker("d-third"))
    Worker(Factory(gh)).handle(waive_job("d-third", pr.number))
    assert len([c for c in gh.issue_comments if "Proposed waiver" in c.body]) == 3
    first.close()
    second.close()


def test_the_reply_marker_holds_any_delivery_header_inertly() -> None:
    assert reply_marker("72d3162e-cc78-11e3-81ab-4c9367dc0958") == (
        "<!-- registry-bot:waive delivery=72d3162e-cc78-11e3-81ab-4c9367dc0958 -->"
    )
    hostile = reply_marker("x --> <b>@everyone</b> <!--")
    assert hostile.count("-->") == 1 and "@" not in hostile and "<b>" not in hostile
    assert hostile != reply_marker("x --> <b>@everyone</b> <!-- ")


def test_a_configuration_over_the_size_github_serves_is_named_not_a_failed_job(
    tmp_path: Path, corpus: Path
) -> None:
    """The base's configuration is over 10 MB: GitHub does not serve it, so the proposal cannot
    know the registry's folders. The reply says which file could not be read (before: the
    client's 413 escaped and failed the job, no reply)."""
    from bot.github.tree_files import MAX_BLOB_BYTES

    repo = Repo.from_folder(corpus, tmp_path / "openlineage")
    repo.write(".github/registry-bot.yml", "# " + "x" * MAX_BLOB_BYTES + "\n")
    repo.commit("a huge configuration", branch="main")
    facet = entry_facet(repo)
    repo.change({facet: (repo.path / facet).read_text() + "\n"})
    command = f"{WAIVE_COMMAND} examples/missing {facet}# the examples come with the next release"
    gh = answered(repo, command, "commenter", "read")
    [reply] = gh.issue_comments
    assert "Cannot propose a waiver" in reply.body, reply.body
    assert "`.github/registry-bot.yml`" in reply.body
    assert "over the size GitHub serves" in reply.body
    assert "```json" not in reply.body


def test_the_stand_in_refuses_a_file_over_the_size_github_serves(tmp_path: Path) -> None:
    """LocalGitHub reads a file as the client does: over 10 MB, the client's 413 (before: the
    content, so no test could see what the App meets)."""
    from bot.github.api import GitHubError
    from bot.github.tree_files import MAX_BLOB_BYTES

    source = tmp_path / "source"
    source.mkdir()
    (source / "big.txt").write_bytes(b"x" * (MAX_BLOB_BYTES + 1))
    (source / "small.txt").write_text("x\n")
    repo = Repo.from_folder(source, tmp_path / "r")
    repo.change({"small.txt": "y\n"})
    gh = LocalGitHub(repo.path, "main", "pr", repo=REPO, number=1)
    assert gh.read_file(REPO, "main", "small.txt") == b"x\n"
    with pytest.raises(GitHubError) as raised:
        gh.read_file(REPO, "main", "big.txt")
    assert raised.value.status == 413
    assert "big.txt" in getattr(gh.read_files(REPO, "main", ["big.txt"]), "skipped", {})


def test_a_waive_reply_refused_on_a_locked_conversation_ends_the_job(
    tmp_path: Path, corpus: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """GitHub refuses the App's comment on a locked conversation (403 "Unable to create comment
    because issue is locked."): the job ends with that said in the log, never retried (before: the
    403 escaped and the queue ran the job again three times, reading the files each time)."""
    gh, pr = load(make_pr_repo(tmp_path, corpus))
    gh.locked = True
    assert Worker(Factory(gh)).handle(waive_job("d-locked", pr.number)) == "proposal-refused"
    assert gh.issue_comments == [] and gh.calls.count("create_issue_comment") == 1
    assert "is locked" in caplog.text and "Unlock conversation" in caplog.text
