# syntax=docker/dockerfile:1
#
# One image for every server entry point: `rummy-game`, `rummy-matchmaker` and
# `rummy-migrate` (deploy/k8s picks the command per workload).
#
#   docker build -t rummy:0.1.0 .
#
# The builder stage installs the dependencies pinned with their hashes in
# deploy/requirements-image.txt (the client's, the `server` and `otel` extras: no
# embedded PostgreSQL, linters or test tools; `make lock` writes it, `make test`
# fails while it is stale), then the project's own wheel, into a virtual
# environment; the runtime stage copies only that environment onto a fresh slim
# Python, so no compiler, pip cache or source tree ends up in the image. The
# runtime never writes outside /tmp (bytecode is compiled at build time), so it
# runs with a read-only root filesystem.

FROM python:3.11-slim-bookworm AS builder
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_ROOT_USER_ACTION=ignore
WORKDIR /src
COPY deploy/requirements-image.txt ./
# Every dependency ships a manylinux wheel for CPython 3.11, so nothing is compiled.
RUN python -m venv /opt/rummy \
    && /opt/rummy/bin/python -m pip install --require-hashes --only-binary=:all: \
        -r requirements-image.txt
# README.m[d]: the glob lets the build go on while the project has no README.
COPY pyproject.toml README.m[d] ./
COPY services ./services
COPY clients ./clients
# The wheel's own dependencies come from the lock alone: --no-index fails the
# build if the lock lacks one, `pip check` if a pinned version does not fit.
RUN python -m pip wheel --no-deps --wheel-dir /wheels . \
    && /opt/rummy/bin/python -m pip install --no-index --find-links=/wheels 'rummy[server,otel]' \
    && /opt/rummy/bin/python -m pip check \
    && /opt/rummy/bin/python -m pip uninstall --yes pip

# Same base as the builder: the copied virtual environment links to its Python.
FROM python:3.11-slim-bookworm AS runtime
LABEL org.opencontainers.image.title="rummy" \
      org.opencontainers.image.description="Rummy game service, matchmaker and migrations" \
      org.opencontainers.image.licenses="Apache-2.0"
# UID/GID 10001: numeric so Kubernetes can check runAsNonRoot, above the
# range of the base image's system users; deploy/k8s runs the pods as 10001.
RUN groupadd --gid 10001 rummy \
    && useradd --uid 10001 --gid 10001 --no-create-home --home-dir /tmp \
        --shell /usr/sbin/nologin rummy
COPY --from=builder /opt/rummy /opt/rummy
ENV PATH=/opt/rummy/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    HOME=/tmp \
    RUMMY_LOG_FORMAT=json
WORKDIR /tmp
USER 10001:10001
# gRPC: game 50051, matchmaker 50052; Prometheus /metrics: game 9101, matchmaker 9102.
EXPOSE 50051 50052 9101 9102
# checkov:skip=CKV_DOCKER_2: no HEALTHCHECK on purpose: one image runs three different programs (game, matchmaker, a one-shot migration) and Kubernetes ignores HEALTHCHECK; liveness and readiness are native gRPC probes against grpc.health.v1 in deploy/k8s.
CMD ["rummy-game"]
