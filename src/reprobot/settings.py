"""Process settings: one class, read once at start-up and passed in as an argument."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict


def _default_cache_dir() -> Path:
    return Path.home() / ".cache" / "reprobot"


class Settings(BaseSettings):
    """Everything Reprobot reads from its environment (``REPROBOT_`` prefix, or a ``.env`` file)."""

    model_config = SettingsConfigDict(
        env_prefix="REPROBOT_", env_file=".env", env_file_encoding="utf-8", extra="ignore"
    )

    cache_dir: Path = Field(default_factory=_default_cache_dir)

    # Sandbox images.
    base_image_source: Literal["auto", "registry", "bootstrap"] = "auto"
    # Empty: the Debian mirror the host's apt sources name.
    debian_mirror: str = ""
    # Index settings for environment builds; empty means "use the host's pip configuration".
    pip_index_url: str = ""
    pip_extra_index_urls: list[str] = Field(default_factory=list)
    pip_ca_bundle: Path | None = None
    build_timeout_s: float = 1800.0
    # Environment images may use this much disk beyond the base images; after each build the
    # least recently used are removed down to it. 0: no cap (prune with `reprobot env prune`).
    env_cache_gb: float = 0.0
    # Resolve an environment's dependencies as the package index stood at its commit's date
    # (releases uploaded later are hidden from every pip call of the build); off: the newest.
    env_as_of_commit: bool = True

    # Per-run limits of a test run.
    run_memory_mb: int = 4096
    run_cpus: float = 1.0
    run_pids: int = 512
    run_timeout_s: float = 900.0
    run_output_cap_bytes: int = 64 * 1024 * 1024
    run_workdir_mb: int = 2048

    # LLM endpoint (OpenAI-compatible); with none set no LLM is called.
    llm_base_url: str = ""
    llm_api_key: str = ""
    llm_model: str = ""
    llm_timeout_s: float = 120.0
    # Retries of one request on 429, 5xx and timeouts (the SDK backs off, honouring retry-after).
    llm_max_retries: int = 3
    # Tokens one reply may use, and all replies of one issue together.
    llm_max_tokens: int = 4096
    llm_token_budget: int = 200_000
    # The wall time all model work for one issue may take (seconds; 0: no bound): a slow
    # endpoint stops drafting there, and the comment says the time budget was spent.
    llm_time_budget_s: float = 600.0
    # Zero-shot samples per issue, their temperature, and the agent's step budget.
    llm_samples: int = 4
    llm_temperature: float = 0.7
    llm_agent_steps: int = 20

    # The confidence score (1 to 5, ``generation.pool.confidence``) a reproduction needs for the
    # App to label the issue reproduced and say "Reproduced"; below it the comment says the test
    # probably reproduces the issue, and what to check. ``bench swt`` prints the label's
    # precision and S at each score. On the Lite dev set (88 reachable instances) a higher
    # threshold was right no more often (92.7% at 1, 88.0% at 4, 80.0% at 5) and gave up S
    # (43.2% to 25.0% at 4), so every reproduction is labelled until a score separates them.
    label_min_confidence: int = Field(default=1, ge=1, le=5)

    # Drafting: how many sandbox runs one issue may spend validating candidates.
    draft_max_runs: int = 12
    # The deadline of one drafting run: a drafted test runs one issue's example, which takes
    # seconds, and one that hangs (a call the issue says never returns) must not hold drafting
    # for the whole run deadline. Runs of tests already chosen keep RUN_TIMEOUT_S.
    draft_run_timeout_s: float = Field(default=120.0, gt=0)

    # The benchmark: where public datasets named ``hub:OWNER/NAME`` are found.
    hub_url: str = "https://huggingface.co"

    # The GitHub App: its identity, the webhook secret, and the API it talks to (GitHub Enterprise
    # Server: https://HOST/api/v3).
    webhook_secret: SecretStr = SecretStr("")
    app_id: int | None = None
    private_key_path: Path | None = None
    github_api_url: str = "https://api.github.com"
    github_timeout_s: float = 30.0
    # Retries of one GitHub request (rate limits, 5xx), the longest wait for a rate limit to
    # reset before the job gives up and is retried later, and the pause between two mutating
    # requests (GitHub asks integrations to send mutations serially, about one a second).
    github_max_retries: int = 5
    github_max_wait_s: float = 900.0
    github_mutation_pause_s: float = 1.0

    # Report pages. The App's address as GitHub users reach it (https://reprobot.example.org):
    # check runs and comments link to their pages under it; empty: no page is linked. Links are
    # signed with a key derived from the webhook secret unless PAGE_SECRET is set, and expire
    # with the page, which is removed PAGE_RETENTION_DAYS after it was made.
    public_url: str = ""
    page_secret: SecretStr = SecretStr("")
    page_retention_days: float = Field(default=90.0, gt=0)
    # Pages of private repositories are shown only to GitHub users who can read the repository:
    # they sign in through the App's own user authorization (the client id and secret of the
    # App's settings page, whose callback URL is PUBLIC_URL/auth/callback), at GITHUB_URL (GitHub
    # Enterprise Server: https://HOST). Without OAUTH_CLIENT_ID such pages are never shown. A
    # user's read access is asked of GitHub again once its answer is ACCESS_CACHE_S old: short,
    # so that losing access to the repository soon takes its pages away too.
    github_url: str = "https://github.com"
    oauth_client_id: str = ""
    oauth_client_secret: SecretStr = SecretStr("")
    access_cache_s: float = Field(default=300.0, ge=0)

    # Store and queue. Empty: SQLite files under the cache directory (the embedded default).
    # DATABASE_URL may be postgresql+psycopg://...; QUEUE_URL may be redis://...
    database_url: str = ""
    queue_url: str = ""
    # Workers inside ``reprobot serve`` (0: run ``reprobot worker`` separately).
    embedded_workers: int = 1
    # Most deliveries the webhook records in one transaction (group commit under load).
    webhook_batch: int = Field(default=64, ge=1, le=1000)
    # A job's lease (renewed while it runs), how often the reaper looks for expired leases and
    # lost enqueues, and how many attempts a job gets before it is marked failed.
    job_lease_s: float = 120.0
    # A running job's worker renews its lease this often (its heartbeat); a job whose worker
    # has missed three heartbeats is taken over without waiting for the whole lease.
    job_heartbeat_s: float = 10.0
    reaper_interval_s: float = 30.0
    job_max_attempts: int = 3
    # A job whose attempts all failed on passing trouble (GitHub's 5xx and rate limits, the
    # network, the Docker engine) comes back after this back-off, doubled each time, at most
    # ``job_max_revivals`` times.
    job_revive_after_s: float = 900.0
    job_max_revivals: int = 3
    # A queued job whose message has not been picked up for this long is enqueued again (its
    # message was lost); a duplicate message is harmless, the ledger lets one worker claim it.
    job_requeue_after_s: float = 1800.0

    @property
    def llm_enabled(self) -> bool:
        """An LLM is called only when an endpoint and a model are both configured."""
        return bool(self.llm_base_url and self.llm_model)

    @property
    def logs_dir(self) -> Path:
        return self.cache_dir / "logs"

    @property
    def database(self) -> str:
        """The store's SQLAlchemy URL (an SQLite file under the cache directory by default)."""
        return self.database_url or f"sqlite:///{self.cache_dir / 'app.sqlite3'}"

    @property
    def queue(self) -> str:
        """The queue's URL: ``sqlite:///FILE`` (the default, under the cache directory) or
        ``redis://HOST:PORT/DB``."""
        return self.queue_url or f"sqlite:///{self.cache_dir / 'queue.sqlite3'}"
