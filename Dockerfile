# syntax=docker/dockerfile:1
# redolab: front-end assets from the npm registry, then a slim Python runtime as a non-root user.

FROM node:20-slim AS assets
WORKDIR /src/frontend
COPY frontend/package.json frontend/package-lock.json frontend/build-assets.mjs ./
RUN npm ci --no-audit --no-fund --loglevel=error && npm run --silent build

FROM python:3.11-slim AS runtime
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    UV_COMPILE_BYTECODE=1 \
    UV_LINK_MODE=copy \
    UV_PYTHON_DOWNLOADS=never \
    REDOLAB_DATA_DIR=/data \
    REDOLAB_BIND=0.0.0.0
RUN pip install --no-cache-dir uv \
    && useradd --system --create-home --home-dir /home/redolab --uid 10001 redolab \
    && mkdir -p /data && chown redolab /data
WORKDIR /app
COPY pyproject.toml uv.lock README.md ./
RUN uv sync --frozen --no-dev --no-install-project
COPY backend backend
COPY migrations migrations
COPY frontend/templates frontend/templates
COPY frontend/static frontend/static
COPY --from=assets /src/frontend/static/vendor frontend/static/vendor
RUN uv sync --frozen --no-dev
ENV PATH="/app/.venv/bin:$PATH"
USER redolab
EXPOSE 8000
VOLUME ["/data"]
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
    CMD python -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=4)"
CMD ["redolab", "serve"]
