"""Event locations: folders, files and globs, local or any Hadoop-compatible URI, resolved to event
files.

Spark's driver lists the files through Hadoop's ``FileSystem`` (the location is handed to Hadoop as
given, so ``hdfs://``, ``s3a://``, ``gs://``, ``abfss://`` work wherever the cluster's configuration
does); the executors read them. The single-process path lists local paths itself, with the same
rules. A location that does not exist or holds no event file is an error naming it, never zero
events.
"""

from __future__ import annotations

import glob
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from bot.review.regression.events import EVENT_SUFFIXES, expand_local, is_remote

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


class LocationError(ValueError):
    """An event location that names nothing, or no event file."""


def _missing(location: str) -> LocationError:
    if glob.has_magic(location):
        return LocationError(f"{location}: the pattern matches no file")
    return LocationError(f"{location}: no such file or folder")


def _empty(location: str) -> LocationError:
    return LocationError(f"{location}: no event file ({', '.join(EVENT_SUFFIXES)}) in it")


def local_files(locations: Iterable[str]) -> list[str]:
    """Event files of local locations (plain paths or ``file://``), with the rules of
    ``spark_files``."""
    found: list[str] = []
    for location in locations:
        if is_remote(location):
            raise LocationError(
                f"{location}: only Spark reads this location (use the Spark engine)"
            )
        path = location.removeprefix("file://")
        pattern = glob.has_magic(path)
        matches = (
            sorted(glob.glob(path, recursive=True))  # noqa: PTH207
            if pattern
            else [path]
            if Path(path).exists()
            else []
        )
        if not matches:
            raise _missing(location)
        files: list[str] = []
        for match in matches:
            if Path(match).is_dir():
                files += [f for f in expand_local([match]) if not _hidden(f, match)]
            elif not pattern or _event_file(match):
                files.append(match)
        if not files:
            raise _empty(location)
        found.extend(files)
    return list(dict.fromkeys(found))


def spark_files(spark: SparkSession, locations: Iterable[str]) -> list[str]:
    """Event files of ``locations`` as Hadoop lists them on the driver (names only, never
    contents)."""
    return list(spark_listing(spark, locations))


def spark_listing(spark: SparkSession, locations: Iterable[str]) -> dict[str, int]:
    """Event files of ``locations`` as Hadoop lists them on the driver, with their sizes.

    A folder is searched recursively for ``.json``, ``.jsonl`` and ``.ndjson`` files (skipping names
    starting with ``.`` or ``_``, as Spark does); a file named directly is read whatever its name; a
    glob keeps the event files it matches (a folder it matches is searched like a folder).
    """
    context = spark.sparkContext
    jvm, conf = context._jvm, context._jsc.hadoopConfiguration()
    if jvm is None:
        raise RuntimeError("the Spark session has stopped: its JVM is gone")
    found: dict[str, int] = {}
    for location in locations:
        path = jvm.org.apache.hadoop.fs.Path(location)
        fs = path.getFileSystem(conf)
        statuses = fs.globStatus(path) or []
        if not statuses:
            raise _missing(location)
        pattern = glob.has_magic(location)
        files: dict[str, int] = {}
        for status in statuses:
            name = status.getPath().toString()
            if status.isDirectory():
                listing = fs.listFiles(status.getPath(), True)
                while listing.hasNext():
                    child = listing.next()
                    if _event_file(child.getPath().getName()) and not _hidden(
                        child.getPath().toString(), name
                    ):
                        files[child.getPath().toString()] = int(child.getLen())
            elif not pattern or _event_file(name):
                files[name] = int(status.getLen())
        if not files:
            raise _empty(location)
        for name in sorted(files):
            found.setdefault(name, files[name])
    return found


def _event_file(name: str) -> bool:
    return name.endswith(EVENT_SUFFIXES)


def _hidden(path: str, root: str) -> bool:
    """A file under ``root`` whose relative path has a part starting with ``.`` or ``_``
    (``_SUCCESS``, ``_temporary``, ``.crc`` files): Spark's data sources skip them too."""
    return any(part.startswith((".", "_")) for part in path[len(root) :].split("/") if part)
