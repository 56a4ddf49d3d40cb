"""``reprobot serve`` (the App's web server, with embedded workers by default) and
``reprobot worker`` (workers only, for scale-out)."""

from __future__ import annotations

import argparse
import gc
import logging
from typing import Any

import structlog
import uvicorn
from prometheus_client import start_http_server

from reprobot.bot import AppContext, JobRunner, Reaper, build_context, create_app
from reprobot.logs import configure_logging
from reprobot.settings import Settings

log = structlog.get_logger(__name__)


def register(sub: Any) -> None:
    serve = sub.add_parser("serve", help="run the GitHub App: webhook endpoint and workers")
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on")
    serve.add_argument("--port", type=int, default=8000, help="port to listen on")
    serve.add_argument(
        "--workers",
        type=int,
        default=None,
        help="worker threads inside this process (default REPROBOT_EMBEDDED_WORKERS; 0: none, "
        "run `reprobot worker` instead)",
    )
    serve.set_defaults(handler=cmd_serve)
    worker = sub.add_parser("worker", help="run workers that take jobs from the queue")
    worker.add_argument("--threads", type=int, default=1, help="jobs run at the same time")
    worker.add_argument(
        "--metrics-port",
        type=int,
        default=None,
        help="serve this worker's metrics (Prometheus text) at http://ADDRESS:PORT/metrics",
    )
    worker.add_argument(
        "--metrics-host", default="127.0.0.1", help="address of the metrics endpoint"
    )
    worker.set_defaults(handler=cmd_worker)


def _start_workers(ctx: AppContext, threads: int, hosted: bool) -> tuple[Any, Reaper]:
    ctx.queue.set_runner(JobRunner(ctx))
    consumer = ctx.queue.consumer(threads, hosted=hosted)
    reaper = Reaper(ctx, ctx.settings.reaper_interval_s)
    return consumer, reaper


def cmd_serve(args: argparse.Namespace, settings: Settings) -> int:
    configure_logging(json_output=True, level=logging.DEBUG if args.verbose else logging.INFO)
    ctx = build_context(settings)
    threads = settings.embedded_workers if args.workers is None else args.workers
    workers: tuple[Any, Reaper] | None = None
    if threads > 0:
        workers = _start_workers(ctx, threads, hosted=True)

    def start() -> None:
        if workers is not None:
            consumer, reaper = workers
            consumer.start()
            reaper.start()
            reaper.reap_once()
        log.info("serve.started", host=args.host, port=args.port, workers=threads)

    def stop() -> None:
        if workers is not None:
            consumer, reaper = workers
            reaper.stop()
            # A job cut short here keeps its lease until it expires; the reaper of the next
            # start (or of another worker) runs it again.
            consumer.stop(graceful=False)
        ctx.close()

    app = create_app(ctx, on_startup=start, on_shutdown=stop)
    # What start-up built lives as long as the process: out of the collector's sight, a full
    # collection no longer walks it, which under load paused every request for 100 ms and more.
    gc.freeze()
    # asyncio's own loop, not uvloop: as fast for this server, and fair under load (uvloop kept
    # a few connections waiting ten times the median; benchmarks/webhook_wrk.py shows the tail).
    uvicorn.run(
        app,
        host=args.host,
        port=args.port,
        log_config=None,
        access_log=False,
        loop="asyncio",
        http="httptools",
    )
    return 0


def cmd_worker(args: argparse.Namespace, settings: Settings) -> int:
    configure_logging(json_output=True, level=logging.DEBUG if args.verbose else logging.INFO)
    ctx = build_context(settings)
    consumer, reaper = _start_workers(ctx, max(1, args.threads), hosted=False)
    if args.metrics_port is not None:
        start_http_server(args.metrics_port, args.metrics_host, registry=ctx.metrics.registry)
        log.info("worker.metrics", host=args.metrics_host, port=args.metrics_port)
    reaper.start()
    reaper.reap_once()
    log.info("worker.started", threads=args.threads)
    try:
        consumer.run()
    finally:
        reaper.stop()
        ctx.close()
    return 0
