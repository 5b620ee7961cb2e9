# One image for both processes of the registry bot:
#   web:    docker run IMAGE                       (gunicorn on $PORT, default 8000)
#   worker: docker run IMAGE python -m bot.app.worker
# PySpark needs a Java runtime (the regression); everything else is plain Python.
FROM python:3.11-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    JAVA_HOME=/usr/lib/jvm/java-17-openjdk-amd64 \
    PYSPARK_PYTHON=/usr/local/bin/python \
    PORT=8000 \
    BOT_QUEUE_URL=/data/queue.sqlite3

RUN apt-get update \
    && apt-get install -y --no-install-recommends openjdk-17-jre-headless git tini \
    && rm -rf /var/lib/apt/lists/*

RUN groupadd --system --gid 10001 bot \
    && useradd --system --uid 10001 --gid bot --home-dir /app --shell /usr/sbin/nologin bot \
    && mkdir -p /app /data \
    && chown bot:bot /data

WORKDIR /app
COPY pyproject.toml README.md ./
COPY bot ./bot
# The checks read the registry schema and the naming files beside the package (registry/, naming/):
# an editable install keeps bot/ in /app so they are found from any working directory.
COPY registry ./registry
COPY naming ./naming
RUN pip install --no-cache-dir -e . \
    && rm -rf /root/.cache
COPY gunicorn.conf.py Procfile app.yml ./

USER bot
VOLUME ["/data"]
EXPOSE 8000

HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
    CMD python -c "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/healthz' % os.environ.get('PORT', '8000'), timeout=4)" || exit 1

ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["gunicorn", "-c", "gunicorn.conf.py", "bot.web:create_app()"]
