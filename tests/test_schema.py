"""Workers of incompatible queue layouts never run together (issue 31, item 5), on a real Redis."""

from __future__ import annotations

import json
import time
import uuid

import pytest
import redis

from bot.github.events import Job
from bot.service.queue import JobQueue, make_huey
from bot.service.queue_schema import SCHEMA_VERSION, Incompatible, Registry


@pytest.fixture
def client(redis_url: str) -> redis.Redis:
    return redis.Redis.from_url(redis_url)


def name() -> str:
    return f"test-{uuid.uuid4().hex[:8]}"


def test_workers_of_one_version_join_and_the_queue_records_it(client: redis.Redis) -> None:
    queue = name()
    Registry(client, queue, "host-a:1").join()
    Registry(client, queue, "host-b:2").join()
    assert client.get(f"registry-bot:{queue}:schema") == str(SCHEMA_VERSION).encode()
    assert Registry(client, queue, "host-c:3").live_workers() == {
        "host-a:1": SCHEMA_VERSION,
        "host-b:2": SCHEMA_VERSION,
    }


def test_a_worker_refuses_to_run_beside_a_live_worker_of_another_version(
    client: redis.Redis,
) -> None:
    queue = name()
    Registry(client, queue, "old-host:1", version=SCHEMA_VERSION + 1).beat()  # registered, alive
    with pytest.raises(Incompatible, match="stop them first"):
        Registry(client, queue, "new-host:2").join()
    # it stopped (or its registration expired)
    client.delete(f"registry-bot:{queue}:workers:old-host:1")
    Registry(client, queue, "new-host:2").join()


def test_a_downgrade_is_refused(client: redis.Redis) -> None:
    queue = name()
    client.set(f"registry-bot:{queue}:schema", str(SCHEMA_VERSION + 1))
    with pytest.raises(Incompatible, match="newer"):
        Registry(client, queue, "host:1").join()


def test_a_worker_from_before_versions_holding_a_lease_is_refused_and_its_old_entries_are_seen(
    redis_url: str, client: redis.Redis
) -> None:
    queue = JobQueue(make_huey(redis_url, name=name()))
    try:
        queue_name = queue.huey.storage.name
        # an unregistered worker reviews
        token = queue._leases.acquire("o/r#1", "old-release-host:9", 30)
        with pytest.raises(Incompatible, match="before schema versions"):
            Registry(client, queue_name, queue.owner).join()
        queue._leases.release("o/r#1", "old-release-host:9", token or 0)
        Registry(client, queue_name, queue.owner).join()

        queue.accept(Job("d1", "pull_request", "opened", 1, "o/r", 1, "a" * 40))
        queue.huey.storage.put_data("job:d1", b"done")  # how the old worker marks a finished job
        queue.recover()
        assert queue.legacy_done == 1 and queue.is_done("d1")
    finally:
        queue.close()


def test_a_worker_of_the_release_before_leases_holding_a_lock_is_refused(
    redis_url: str, client: redis.Redis
) -> None:
    """44bc861 and earlier kept ``lock:<repo>#<number>`` in huey's key/value store, written as
    that release's ``pr_lock`` writes it (``put_if_empty``, ``{"owner", "at", "token"}``): a live
    one refuses the new worker; one older than that release's 900 s ``lock_ttl`` (its worker died)
    does not."""
    queue = JobQueue(make_huey(redis_url, name=name()))
    try:
        storage, queue_name = queue.huey.storage, queue.huey.storage.name

        def lock(pr_key: str, at: float) -> None:
            held = {"owner": "old-release-host:7", "at": at, "token": uuid.uuid4().hex}
            assert storage.put_if_empty(f"lock:{pr_key}", json.dumps(held).encode())

        lock("o/r#1", time.time())
        with pytest.raises(Incompatible, match="old-release-host:7"):
            Registry(client, queue_name, queue.owner).join()
        storage.delete_data("lock:o/r#1")  # the old worker finished its review and stopped
        lock("o/r#2", time.time() - 901)  # left by an old worker that died
        Registry(client, queue_name, queue.owner).join()
    finally:
        queue.close()
