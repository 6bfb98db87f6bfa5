# syntax=docker/dockerfile:1
# redolab: front-end assets from the npm registry, the static redoprobe (musl), the manual, then a slim
# Python runtime as a non-root user. The runtime also holds the probe's C source, so hosts of
# another architecture can build it.

FROM node:20-slim AS assets
WORKDIR /src/frontend
COPY frontend/package.json frontend/package-lock.json frontend/build-assets.mjs ./
RUN npm ci --no-audit --no-fund --loglevel=error && npm run --silent build

FROM debian:bookworm-slim AS probe
RUN apt-get update && apt-get install -y --no-install-recommends make gcc libc6-dev musl-tools \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src/probe
COPY backend/redolab/redoprobe/ ./
RUN make clean && make redoprobe && make check

# The manual (docs/ with MkDocs Material), whose API and CLI pages are generated from the package itself.
FROM python:3.11-slim AS manual
ENV UV_LINK_MODE=copy UV_PYTHON_DOWNLOADS=never NO_MKDOCS_2_WARNING=1
RUN pip install --no-cache-dir uv
WORKDIR /src
COPY pyproject.toml uv.lock README.md ./
RUN uv sync --frozen --no-default-groups --group docs --no-install-project
COPY backend backend
COPY frontend/templates frontend/templates
COPY frontend/static frontend/static
COPY docs docs
COPY scripts/manual_reference.py scripts/manual_reference.py
COPY mkdocs.yml ./
RUN uv sync --frozen --no-default-groups --group docs && uv run --no-sync mkdocs build --strict --quiet

FROM python:3.11-slim AS runtime
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    UV_COMPILE_BYTECODE=1 \
    UV_LINK_MODE=copy \
    UV_PYTHON_DOWNLOADS=never \
    REDOLAB_DATA_DIR=/data \
    REDOLAB_BIND=0.0.0.0
# Chromium prints the plan report as PDF (headless, no network); fonts for its text.
RUN apt-get update && apt-get install -y --no-install-recommends chromium fonts-dejavu-core \
    && rm -rf /var/lib/apt/lists/*
RUN pip install --no-cache-dir uv \
    && useradd --system --create-home --home-dir /home/redolab --uid 10001 redolab \
    && mkdir -p /data && chown redolab /data
WORKDIR /app
COPY pyproject.toml uv.lock README.md ./
RUN uv sync --frozen --no-default-groups --no-install-project
COPY backend backend
COPY migrations migrations
COPY frontend/templates frontend/templates
COPY frontend/static frontend/static
COPY --from=assets /src/frontend/static/vendor frontend/static/vendor
COPY --from=probe /src/probe/redoprobe backend/redolab/redoprobe/redoprobe
COPY --from=manual /src/frontend/manual frontend/manual
RUN uv sync --frozen --no-default-groups
ENV PATH="/app/.venv/bin:$PATH"
USER redolab
EXPOSE 8000
VOLUME ["/data"]
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
    CMD python -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=4)"
CMD ["redolab", "serve"]
