"""GitHub's pacing shared by every worker process through Redis (``bot.github.pacing.RedisPacer``),
on a real Redis: each pacer object here stands for another worker process (its own client, no shared
memory)."""

from __future__ import annotations

import itertools
import threading
import time
import uuid
from collections.abc import Iterator

import pytest
import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from bot.github.api import RateLimited
from bot.github.pacing import RedisPacer


@pytest.fixture
def client(redis_url: str) -> Iterator[redis.Redis]:
    made = redis.Redis.from_url(redis_url)
    yield made
    made.close()


def pacers(redis_url: str, n: int, **options: float) -> list[RedisPacer]:
    prefix = f"test-pace-{uuid.uuid4().hex[:8]}"  # the session's Redis is shared by tests
    return [
        RedisPacer(redis.Redis.from_url(redis_url), 1, prefix=prefix, **options) for _ in range(n)
    ]  # type: ignore[arg-type]


def test_writes_of_an_installation_are_a_pause_apart_across_processes(redis_url: str) -> None:
    """Finding: two worker processes paced their writes each on its own: 70 of 80 broke the 1 s
    advice."""
    spans: list[tuple[float, float]] = []
    lock = threading.Lock()

    def write(pacer: RedisPacer) -> None:
        for _ in range(3):
            with pacer.request(write=True, creates=True):
                start = time.monotonic()
                time.sleep(0.02)  # the request
                with lock:
                    spans.append((start, time.monotonic()))

    threads = [threading.Thread(target=write, args=(p,)) for p in pacers(redis_url, 3, pause=0.2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    spans.sort()
    gaps = [b[0] - a[1] for a, b in itertools.pairwise(spans)]
    # Redis's clock and ours tick apart by < 5 ms
    assert len(spans) == 9 and min(gaps) >= 0.2 - 0.005, gaps


def test_reads_are_serial_and_go_on_between_writes(redis_url: str) -> None:
    first, second = pacers(redis_url, 2, pause=0.5)
    inside: list[int] = []
    overlaps: list[int] = []
    lock = threading.Lock()

    def read(pacer: RedisPacer) -> None:
        for _ in range(5):
            with pacer.request(write=False):
                with lock:
                    inside.append(1)
                    overlaps.append(len(inside))
                time.sleep(0.01)
                with lock:
                    inside.pop()

    with first.request(write=True):
        pass
    started = time.monotonic()
    threads = [threading.Thread(target=read, args=(p,)) for p in (first, second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert max(overlaps) == 1 and len(overlaps) == 10  # one request of the installation at a time
    assert time.monotonic() - started < 0.5  # reads need not wait for the write pause


def test_the_content_creation_limits_hold_across_processes(redis_url: str) -> None:
    """GitHub's secondary limits: 80 content-creating requests a minute, 500 an hour (here 2 and
    3)."""
    a, b = pacers(redis_url, 2, pause=0, per_minute=2, per_hour=3, max_wait=1.0)
    for pacer in (a, b):
        with pacer.request(write=True, creates=True):
            pass
    with a.request(write=True, creates=False):  # an update creates nothing: not counted
        pass
    # a third creation this minute: wait ~60 s, more than max_wait
    with pytest.raises(RateLimited) as minute, b.request(write=True, creates=True):
        pass
    assert 55 < minute.value.reset_at - time.time() <= 60
    hourly = pacers(redis_url, 1, pause=0, per_minute=100, per_hour=1, max_wait=1.0)[0]
    with hourly.request(write=True, creates=True):
        pass
    with pytest.raises(RateLimited) as hour, hourly.request(write=True, creates=True):
        pass
    assert 3590 < hour.value.reset_at - time.time() <= 3600


def test_a_worker_dying_mid_request_frees_the_installation_after_hold(redis_url: str) -> None:
    dead, alive = pacers(redis_url, 2, pause=0, hold=0.3)
    request = dead.request(write=False)
    request.__enter__()  # and the process dies: nobody releases
    started = time.monotonic()
    with alive.request(write=False):
        waited = time.monotonic() - started
    assert 0.2 < waited < 1.0


def test_one_process_keeps_the_content_creation_limits_too() -> None:
    """The per-process pacer (SQLite queue, one worker) counts creations as well (GitHub: 80 a
    minute, 500 an hour). Here without the 1 s pause, so that the minute's limit is reached."""
    from bot.github.client import WritePacer

    now = [1_000_000.0]
    slept: list[float] = []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        now[0] += seconds

    pacer = WritePacer(0.0, sleep=sleep, clock=lambda: now[0], max_wait=120)
    for _ in range(80):
        with pacer.request(write=True, creates=True):
            pass
    with pacer.request(write=True, creates=False):  # an update creates nothing: not held back
        pass
    assert slept == []
    # the 81st waits for the first to leave the minute
    with pacer.request(write=True, creates=True):
        pass
    assert slept == [60.0]
    for _ in range(500 - 81):  # 80 a minute: the hour's 500 are reached within 7 minutes
        with pacer.request(write=True, creates=True):
            pass
    assert now[0] - 1_000_000.0 == pytest.approx(6 * 60)
    # the 501st in the hour
    with pytest.raises(RateLimited) as hour, pacer.request(write=True, creates=True):
        pass
    assert hour.value.reset_at == pytest.approx(1_000_000.0 + 3600)


def test_one_process_keeps_the_requests_of_an_installation_serial() -> None:
    from bot.github.client import WritePacer

    pacer = WritePacer(0.0)
    inside: list[int] = []
    most = [0]
    lock = threading.Lock()

    def request(write: bool) -> None:
        for _ in range(5):
            with pacer.request(write=write):
                with lock:
                    inside.append(1)
                    most[0] = max(most[0], len(inside))
                time.sleep(0.005)
                with lock:
                    inside.pop()

    threads = [threading.Thread(target=request, args=(n % 2 == 0,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert most[0] == 1


class ReplyLost(redis.Connection):
    """A connection whose next script call is carried out by Redis but whose reply is lost (a
    connection reset after the server answered): redis-py reconnects and sends the call again."""

    lose = False
    last_command = ""

    def send_command(self, *args: object, **kwargs: object) -> None:
        ReplyLost.last_command = str(args[0])
        super().send_command(*args, **kwargs)

    def read_response(self, *args: object, **kwargs: object) -> object:
        response = super().read_response(*args, **kwargs)
        if ReplyLost.lose and ReplyLost.last_command == "EVALSHA":
            ReplyLost.lose = False
            raise redis.exceptions.ConnectionError("Connection reset by peer")
        return response


def test_an_acquisition_sent_again_after_a_lost_reply_goes_at_once(redis_url: str) -> None:
    """Finding: the acquire script ran, its reply was lost, redis-py sent it again (the queue's
    client retries a call once) and the second run found the ``busy`` key the first had set, with
    the caller's own token: the request waited the whole hold (10 s) for itself. A request that
    already holds the installation goes."""
    url = redis.connection.parse_url(redis_url)
    pool = redis.ConnectionPool(
        connection_class=ReplyLost,
        host=url["host"],
        port=url["port"],
        retry=Retry(NoBackoff(), 1),
    )
    sleeps: list[float] = []
    pacer = RedisPacer(
        redis.Redis(connection_pool=pool),
        1,
        0.0,
        hold=2.0,
        prefix=f"test-pace-{uuid.uuid4().hex[:8]}",
        sleep=sleeps.append,
    )
    with pacer.request(False):  # loads the scripts
        pass
    ReplyLost.lose = True
    started = time.monotonic()
    with pacer.request(True, creates=True):
        pass
    assert not ReplyLost.lose  # the reply was lost, and the call sent again
    assert sleeps == [] and time.monotonic() - started < 1.0
    with pacer.request(False):  # released: the next request goes at once too
        pass
    assert sleeps == []
    pool.disconnect()
