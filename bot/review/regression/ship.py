"""The project's code for executors that have only Python and PySpark: one archive, built once,
cached.

More in docs/module-notes.md (bot/review/regression/ship.py).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from importlib import metadata
from pathlib import Path

import bot
from bot.core.deferred_format_libraries import DEFERRED

# the folder the archive is extracted to, relative to each executor's working folder
ALIAS = "registry-bot-deps"
# shipped from its sources (an editable install has no files to list)
PROJECT = "openlineage-registry-bot"
PROVIDED = {"pyspark", "py4j"}  # the workers' own: they must match the cluster's Spark
# what the Python workers import, lazily ones too (the pure-Python jsonschema that explains a
# failure is imported only when an event fails, and the format libraries it would import when
# a value of their format is first checked: the probe must import them itself)
WORKER_MODULES = (
    "bot.review.regression.spark_job",
    "bot.model.schemas_python",
    *DEFERRED,
    "pyarrow",
    "pyspark.worker",
)
REQUIREMENT = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
EXTRA = re.compile(r"extra\s*==")
_PROBE = """
import importlib, json, sys
for name in sys.argv[1:]:
    importlib.import_module(name)
print(json.dumps(sorted({n.split(".")[0] for n in sys.modules})))
"""


def session_conf(cache: Path | None = None) -> dict[str, str]:
    """The session settings that ship the archive to a cluster's executors."""
    archive = build(cache or _cache_folder())
    return {"spark.archives": f"{archive}#{ALIAS}", "spark.executorEnv.PYTHONPATH": ALIAS}


def distributions() -> list[metadata.Distribution]:
    """The installed distributions the Python workers import, with everything they require."""
    probe = subprocess.run(
        [sys.executable, "-c", _PROBE, *WORKER_MODULES], capture_output=True, text=True, check=True
    )
    owners = metadata.packages_distributions()
    names = {dist for module in json.loads(probe.stdout) for dist in owners.get(module, ())}
    found: dict[str, metadata.Distribution] = {}
    pending = sorted(names)
    while pending:
        name = pending.pop()
        key = _normal(name)
        if key in found or key in PROVIDED or key == PROJECT:
            continue
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
        found[key] = dist
        for requirement in dist.requires or ():
            required = REQUIREMENT.match(requirement)
            # an extra's requirements are not installed for us
            if required and not EXTRA.search(requirement):
                pending.append(required.group(0))
    return sorted(found.values(), key=lambda d: _normal(d.metadata["Name"]))


def build(cache: Path) -> Path:
    """The archive for this interpreter, installed distributions and ``bot`` sources (rebuilt when
    any of them changes)."""
    dists = distributions()
    package = Path(bot.__file__).parent
    # os.walk follows bot/bundled's links into registry/ and naming/ (in a checkout), which rglob
    # does not
    sources = sorted(
        Path(folder, name)
        for folder, _, names in os.walk(package, followlinks=True)
        if "__pycache__" not in Path(folder).parts
        for name in names
    )
    digest = hashlib.sha256(f"{sys.version}|{sysconfig.get_platform()}".encode())
    for dist in dists:
        digest.update(f"|{dist.metadata['Name']}=={dist.version}".encode())
    for path in sources:
        digest.update(str(path.relative_to(package)).encode() + b"\0" + path.read_bytes())
    archive = cache / f"worker-{digest.hexdigest()[:16]}.zip"
    if archive.exists():
        return archive
    cache.mkdir(parents=True, exist_ok=True)
    partial = archive.with_suffix(f".{os.getpid()}.tmp")
    with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as out:
        for dist in dists:
            for file in dist.files or ():
                source = Path(str(dist.locate_file(file)))
                if ".." not in file.parts and "__pycache__" not in file.parts and source.is_file():
                    out.write(source, file.as_posix())
        for path in sources:
            out.write(path, (Path("bot") / path.relative_to(package)).as_posix())
    partial.replace(archive)
    return archive


def clean_finished(cwd: Path | None = None) -> list[Path]:
    """Remove the extracted archives of ended executors of this standalone worker; returns them.

    Runs in an executor's folder (``<work>/app-*/<id>``, holding ``ALIAS``); anywhere else (local
    mode, YARN's containers) it does nothing. An executor has ended when no process of this machine
    has its folder as working folder (the executor JVM and its Python workers run there while it
    lives).
    """
    here = (cwd or Path.cwd()).resolve()
    if not (here / ALIAS).is_dir() or not here.parent.name.startswith("app-"):
        return []
    live = set()
    for process in Path("/proc").iterdir():
        if process.name.isdigit():
            try:
                live.add((process / "cwd").readlink())
            # ended meanwhile, or another user's process (not an executor of this worker)
            except OSError:
                continue
    removed = []
    for folder in sorted(here.parent.parent.glob(f"app-*/*/{ALIAS}")):
        if folder.parent != here and folder.parent not in live:
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed


def _normal(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


def _cache_folder() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "registry-bot"
