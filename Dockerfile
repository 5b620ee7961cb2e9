# Two images from one Dockerfile (build both with `make images`, or with docker/podman build --target):
#   web:    the webhook service, gunicorn on $PORT (default 8000). No Spark, no Java.
#   worker: python -m bot.service.worker, with Java and PySpark for the regression; also runs the command line
#           (`docker run IMAGE registry-bot demo`).
# Both run as the non-root user `bot` and need nothing writable but /data (the queue) and /tmp, so they run
# with a read-only root filesystem (docs/app.md, compose.yaml). Python packages come from the lock files
# (requirements/*.txt, hashes checked): the same versions as CI's venv.
FROM python:3.11-slim-bookworm AS base

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PORT=8000 \
    BOT_QUEUE_URL=/data/queue.sqlite3

RUN apt-get update \
    && apt-get install -y --no-install-recommends tini \
    && rm -rf /var/lib/apt/lists/* \
    && groupadd --system --gid 10001 bot \
    && useradd --system --uid 10001 --gid bot --home-dir /app --shell /usr/sbin/nologin bot \
    && mkdir -p /app /data \
    && chown bot:bot /data

WORKDIR /app
VOLUME ["/data"]
ENTRYPOINT ["/usr/bin/tini", "--"]

# The source both images install. The checks read the registry schema and the naming files through
# bot/bundled, whose links point at registry/ and naming/ (COPY keeps the links): an editable install keeps
# bot/ in /app beside them.
FROM scratch AS source
COPY pyproject.toml README.md gunicorn.conf.py Procfile app.yml /app/
COPY bot /app/bot
COPY registry /app/registry
COPY naming /app/naming

FROM base AS web
COPY requirements/web.txt /tmp/requirements.txt
RUN pip install --no-cache-dir --require-hashes --no-deps -r /tmp/requirements.txt \
    && rm /tmp/requirements.txt
COPY --from=source /app /app
RUN pip install --no-cache-dir --no-deps --no-build-isolation -e . \
    && rm -rf /root/.cache /app/build
USER bot
EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
    CMD python -c "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/healthz' % os.environ.get('PORT', '8000'), timeout=4)" || exit 1
CMD ["gunicorn", "-c", "gunicorn.conf.py", "bot.service.wsgi:create_app()"]

# git: the command line's repositories (the demo builds its sample as one); Java for PySpark.
FROM base AS worker
ENV JAVA_HOME=/usr/lib/jvm/java-17-openjdk-amd64 \
    PYSPARK_PYTHON=/usr/local/bin/python
RUN apt-get update \
    && mkdir -p /usr/share/man/man1 \
    && apt-get install -y --no-install-recommends openjdk-17-jre-headless git \
    && rm -rf /var/lib/apt/lists/*
COPY requirements/worker.txt /tmp/requirements.txt
RUN pip install --no-cache-dir --require-hashes --no-deps -r /tmp/requirements.txt \
    && rm /tmp/requirements.txt
COPY --from=source /app /app
RUN pip install --no-cache-dir --no-deps --no-build-isolation -e . \
    && rm -rf /root/.cache /app/build
USER bot
# the worker writes its heartbeat (tmpfs /tmp) at start and after each sweep of the queue (bot/service/health.py)
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
    CMD ["python", "-m", "bot.service.health", "worker"]
CMD ["python", "-m", "bot.service.worker"]
