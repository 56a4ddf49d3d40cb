# The Reprobot App itself (web server and workers). Test runs do not happen in this container:
# they run in sandbox containers on the Docker engine that DOCKER_HOST names, which should be a
# dedicated engine, not the one hosting this container.
ARG BASE=python:3.11-slim
FROM ${BASE}
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends git \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY pyproject.toml README.md ./
COPY src ./src
COPY infra ./infra
RUN python -m pip install --no-cache-dir '.[scale]'
RUN useradd --create-home --uid 10001 reprobot
USER reprobot
ENV REPROBOT_CACHE_DIR=/home/reprobot/.cache/reprobot
EXPOSE 8000
ENTRYPOINT ["reprobot"]
CMD ["--help"]
