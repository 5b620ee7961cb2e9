"""The images of the Dockerfile, built here by podman (``tests/images.py``) and run as a self-hoster
would: read-only root filesystem, the image's non-root user, the queue on a volume, host networking
to reach the stand-in GitHub. These tests run last: the build runs beside the rest of the suite.
"""

from __future__ import annotations

import json
import re
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from packaging.utils import canonicalize_name

from tests.gitrepo import Repo, git
from tests.images import PODMAN, TAG, podman, wait_for_build
from tests.regress_helpers import JOB_FACET, make_tree
from tests.test_e2e import Service, http
from tests.test_locks import SPARK_ONLY, read_lock

pytestmark = pytest.mark.e2e
WEB, WORKER = f"{TAG}:web", f"{TAG}:worker"
# what a clean start never logs: a traceback, gunicorn's [ERROR] lines, the JSON logs' error level
START_ERRORS = re.compile(r'Traceback|\[ERROR\]|"level": "(error|critical)"|Control server error')


@pytest.fixture(scope="module")
def images() -> float:
    """Both images, once the background build is done; the build's duration in seconds."""
    return wait_for_build()


def image_size(tag: str) -> int:
    return int(podman("image", "inspect", "--format", "{{.Size}}", tag).stdout)


def run(image: str, *command: str, timeout: float = 300.0) -> subprocess.CompletedProcess[str]:
    """``command`` in a throw-away container of ``image`` as it is deployed: read-only, tmpfs
    /tmp."""
    return podman(
        "run",
        "--rm",
        "--read-only",
        "--tmpfs",
        "/tmp",
        "--network",
        "none",
        image,
        *command,
        timeout=timeout,
        check=False,
    )


def test_web_image_is_small_and_has_neither_spark_nor_java(images: float) -> None:
    web, worker = image_size(WEB), image_size(WORKER)
    print(f"\nimages built in {images:.0f} s; web {web / 1e6:.0f} MB, worker {worker / 1e6:.0f} MB")
    assert web < 400e6 < worker
    probe = (
        "import importlib.util, shutil; "
        f"print([m for m in {sorted(SPARK_ONLY)!r} if importlib.util.find_spec(m)], "
        f"shutil.which('java'))"
    )
    assert run(WEB, "python", "-c", probe).stdout.split() == ["[]", "None"]
    has = run(WORKER, "python", "-c", probe).stdout
    assert all(module in has for module in SPARK_ONLY) and "/java" in has


def test_images_run_as_a_non_root_user_with_the_data_volume(images: float) -> None:
    for image in (WEB, WORKER):
        config = json.loads(podman("image", "inspect", image).stdout)[0]["Config"]
        assert config["User"] == "bot" and "/data" in config["Volumes"]
        assert run(image, "id", "-u").stdout.strip() == "10001"
    assert "/healthz" in " ".join(
        json.loads(podman("image", "inspect", WEB).stdout)[0]["Healthcheck"]["Test"]
    )


def test_installed_versions_are_the_locked_ones(images: float) -> None:
    """pip in each image lists exactly its lock file's versions (and the project, editable)."""
    for image, lock in ((WEB, "web"), (WORKER, "worker")):
        frozen = run(
            image, "python", "-m", "pip", "list", "--format", "json", "--disable-pip-version-check"
        ).stdout
        installed = {canonicalize_name(p["name"]): p["version"] for p in json.loads(frozen)}
        locked = {name: version for name, (version, _) in read_lock(lock).items()}
        assert {name: installed.get(name) for name in locked} == locked
        assert installed.pop("openlineage-registry-bot") == "0.1.0"


class ContainerService(Service):
    """The service of ``tests/test_e2e.py`` with web and worker in containers: read-only, as the
    image's user, the queue on a fresh named volume, host networking (the stand-in listens on
    127.0.0.1)."""

    start_timeout = 60.0

    def __init__(self, tmp: Path) -> None:
        super().__init__(tmp)
        self.volume = f"registry-bot-test-{uuid.uuid4().hex[:8]}"
        self.containers: list[str] = []

    def start_web(self) -> None:
        self._container("web", WEB, "--env", f"PORT={self.web.rsplit(':', 1)[1]}")

    def start_worker(self) -> None:
        self._container(
            "worker",
            WORKER,
            command=("python", "-m", "bot.service.worker", "--write-pause", "0", "--poll", "0.05"),
        )

    def _container(
        self, name: str, image: str, *options: str, command: tuple[str, ...] = ()
    ) -> None:
        container = f"{self.volume}-{name}"
        self.containers.append(container)
        env = {
            "GITHUB_APP_ID": "1",
            "GITHUB_WEBHOOK_SECRET": self.env["GITHUB_WEBHOOK_SECRET"],
            "GITHUB_API_URL": self.env["GITHUB_API_URL"],
            "BOT_RECONCILE_EVERY": "0",
            "GITHUB_APP_PRIVATE_KEY": (self.tmp / "app.pem").read_text(),
        }
        self._spawn(
            name,
            [
                str(PODMAN),
                "run",
                "--rm",
                "--name",
                container,
                "--read-only",
                "--tmpfs",
                "/tmp",
                "--network",
                "host",
                "--volume",
                f"{self.volume}:/data",
                *options,
                *(f"--env={key}={value}" for key, value in env.items()),
                image,
                *command,
            ],
        )

    def logs(self, name: str) -> str:
        """What the container ``name`` logged (not podman's own messages)."""
        done = podman("logs", f"{self.volume}-{name}")
        return done.stdout + done.stderr

    def close(self) -> None:
        for container in self.containers:
            podman("stop", "--time", "10", container, check=False)
        super().close()
        podman("volume", "rm", "--force", self.volume, check=False)


@pytest.fixture
def containers(
    images: float, tmp_path_factory: pytest.TempPathFactory, corpus: Path
) -> Iterator[ContainerService]:
    """The service in containers over a repository whose pull request makes a facet field required
    that a sample event lacks: a review with the real checks and a regression that runs Spark in the
    worker."""
    folder = tmp_path_factory.mktemp("images")
    repo = Repo.from_folder(make_tree(corpus, folder / "tree"), folder / "repo")
    repo.edit_json(
        JOB_FACET,
        lambda d: d["$defs"]["GcpComposerJobFacet"]["allOf"][1]["required"].append("operator"),
    )
    repo.commit("make operator required")
    service = ContainerService(tmp_path_factory.mktemp("service"))
    try:
        service.start(repo.path)
        yield service
    finally:
        service.close()


def test_web_and_worker_containers_review_a_signed_delivery(containers: ContainerService) -> None:
    """/healthz, /readyz and the HEALTHCHECK pass; a signed delivery is reviewed by the
    containerised worker (real checks, the regression on Spark in the image breaks the sample);
    neither container logs an error or a traceback."""
    assert http("GET", f"{containers.web}/healthz")[0] == 200
    status, ready = http("GET", f"{containers.web}/readyz")
    assert status == 200 and ready["pending"] == 0
    # the image's HEALTHCHECK
    assert podman("healthcheck", "run", f"{containers.volume}-web").returncode == 0
    head = git(containers.repo, "rev-parse", "pr")
    assert containers.deliver("opened", head) == 202
    run = containers.completed_run(head, timeout=240)
    assert run["conclusion"] == "failure"
    state = containers.summary_for(head)
    [summary] = [c for c in state["issue_comments"] if "registry-bot:summary" in c["body"]]
    regression = summary["body"].split("### Regression over sample events", 1)[1]
    assert "(Spark local" in regression and "broken by this change: **1**" in regression
    for name in ("web", "worker"):
        assert not START_ERRORS.search(containers.logs(name)), containers.logs(name)[-3000:]


def test_demo_runs_in_the_worker_image(images: float) -> None:
    done = run(WORKER, "registry-bot", "demo", timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert re.search(r"^FAILURE: 9 error\(s\)", done.stdout, re.M)
    assert re.search(r"^== Regression over sample events", done.stdout, re.M)
    assert "Traceback" not in done.stderr
