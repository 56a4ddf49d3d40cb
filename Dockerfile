# The Reprobot App itself (web server and workers), built by `reprobot app image`. Test runs do
# not happen in this container: they run in sandbox containers on the Docker engine that
# DOCKER_HOST names, a dedicated engine, not the one hosting this container.
#
# BASE: python:3.11-slim where a registry answers, otherwise the sandbox base image bootstrapped
# from Debian's packages (it has Python 3.11, pip and git). The package index settings reach only
# the build stage, so the final image keeps none of them.
ARG BASE=python:3.11-slim

FROM ${BASE} AS build
ARG PIP_INDEX_URL=""
ARG PIP_EXTRA_INDEX_URL=""
ARG PIP_TRUSTED_HOST=""
COPY build/ /build/
COPY pyproject.toml README.md /src/
COPY src /src/src
COPY infra /src/infra
RUN set -eu; \
    if [ -f /build/ca.pem ]; then export PIP_CERT=/build/ca.pem; fi; \
    python3 -m venv /opt/reprobot-app; \
    /opt/reprobot-app/bin/pip install --no-cache-dir --disable-pip-version-check '/src[scale]'

FROM ${BASE}
RUN command -v git >/dev/null || { apt-get update \
      && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends git \
      && rm -rf /var/lib/apt/lists/*; }
COPY --from=build /opt/reprobot-app /opt/reprobot-app
RUN useradd --create-home --uid 10001 reprobot
USER reprobot
ENV PATH=/opt/reprobot-app/bin:/usr/local/bin:/usr/bin:/bin \
    REPROBOT_CACHE_DIR=/home/reprobot/.cache/reprobot
WORKDIR /home/reprobot
EXPOSE 8000
ENTRYPOINT ["reprobot"]
CMD ["--help"]
