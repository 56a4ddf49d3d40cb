"""What the App is doing, in Prometheus's text format (``GET /metrics``; ``reprobot worker
--metrics-port``).

Counters and histograms are kept by the process that sees the event: the web app counts
deliveries, workers time jobs, sandbox runs and environment builds, every GitHub client counts
its requests and rate-limit waits. Jobs by state and the queue's depth are read from the ledger
and the queue when scraped, so every process reports the same numbers for them.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterable, Iterator, Mapping

import httpx
from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
_SECONDS = (0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600, 1800, 3600)


class _StateCollector(Collector):
    """Jobs by kind and state, and the queue's depth, read when scraped."""

    def __init__(
        self,
        job_counts: Callable[[], Mapping[tuple[str, str], int]] | None,
        queue_depth: Callable[[], int] | None,
    ) -> None:
        self.job_counts, self.queue_depth = job_counts, queue_depth

    def collect(self) -> Iterable[Metric]:
        if self.job_counts is not None:
            jobs = GaugeMetricFamily(
                "reprobot_jobs", "Jobs in the ledger by kind and state", labels=["kind", "state"]
            )
            with contextlib.suppress(Exception):
                for (kind, state), count in sorted(self.job_counts().items()):
                    jobs.add_metric([kind, state], count)
            yield jobs
        if self.queue_depth is not None:
            depth = GaugeMetricFamily("reprobot_queue_depth", "Messages waiting in the queue")
            with contextlib.suppress(Exception):
                depth.add_metric([], self.queue_depth())
            yield depth


class Metrics:
    """One process's metrics, in a registry of its own."""

    def __init__(
        self,
        job_counts: Callable[[], Mapping[tuple[str, str], int]] | None = None,
        queue_depth: Callable[[], int] | None = None,
    ) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.deliveries = Counter(
            "reprobot_deliveries",
            "Webhook deliveries by GitHub event and what became of them",
            ["event", "outcome"],
            registry=r,
        )
        self.job_seconds = Histogram(
            "reprobot_job_duration_seconds",
            "Time a worker spent on a job, by kind and outcome",
            ["kind", "outcome"],
            buckets=_SECONDS,
            registry=r,
        )
        self.sandbox_seconds = Histogram(
            "reprobot_sandbox_run_duration_seconds",
            "Time of one sandboxed test run",
            buckets=_SECONDS,
            registry=r,
        )
        self.builds = Counter(
            "reprobot_image_builds",
            "Images built (base images, environments)",
            ["kind"],
            registry=r,
        )
        self.build_seconds = Histogram(
            "reprobot_image_build_duration_seconds",
            "Time of one image build",
            ["kind"],
            buckets=_SECONDS,
            registry=r,
        )
        self.github_requests = Counter(
            "reprobot_github_requests",
            "Requests to GitHub's API by method and answer status ('error': no answer)",
            ["method", "status"],
            registry=r,
        )
        self.rate_limit_waits = Counter(
            "reprobot_github_rate_limit_waits",
            "Waits before retrying a GitHub request, by reason",
            ["reason"],
            registry=r,
        )
        self.rate_limit_wait_seconds = Counter(
            "reprobot_github_rate_limit_wait_seconds",
            "Seconds spent waiting before retrying GitHub requests",
            registry=r,
        )
        if job_counts is not None or queue_depth is not None:
            r.register(_StateCollector(job_counts, queue_depth))

    def render(self) -> bytes:
        return generate_latest(self.registry)

    def waited(self, reason: str, seconds: float) -> None:
        """A GitHub request waits ``seconds`` before its retry (``RetryPolicy``'s hook)."""
        self.rate_limit_waits.labels(reason).inc()
        self.rate_limit_wait_seconds.inc(seconds)


class CountingTransport(httpx.BaseTransport):
    """An HTTP transport that counts GitHub's answers by method and status."""

    def __init__(self, metrics: Metrics, inner: httpx.BaseTransport | None = None) -> None:
        self.metrics = metrics
        self.inner = inner or httpx.HTTPTransport()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        try:
            response = self.inner.handle_request(request)
        except httpx.HTTPError:
            self.metrics.github_requests.labels(request.method, "error").inc()
            raise
        self.metrics.github_requests.labels(request.method, str(response.status_code)).inc()
        return response

    def close(self) -> None:
        self.inner.close()


class MetricsProgress:
    """A ``reprobot.progress.Progress`` that records what jobs spend their time on."""

    def __init__(self, metrics: Metrics) -> None:
        self.metrics = metrics

    @contextlib.contextmanager
    def step(self, what: str, kind: str = "") -> Iterator[None]:
        started = time.monotonic()
        yield
        if kind in ("base-image", "environment"):
            self.metrics.builds.labels(kind).inc()
            self.metrics.build_seconds.labels(kind).observe(time.monotonic() - started)

    def detail(self, what: str, kind: str = "", seconds: float | None = None) -> None:
        if kind == "sandbox-run" and seconds is not None:
            self.metrics.sandbox_seconds.observe(seconds)
