"""The App's labels: added once, never again after a person removed one, withdrawn only if
the App added them."""

from __future__ import annotations

from reprobot.bot.github.auth import (
    VERIFY_PERMISSIONS,
    GitHubApp,
)
from reprobot.bot.github.repo_api import RepoAPI
from reprobot.bot.jobs.labels import COLORS, DESCRIPTIONS, apply_label, withdraw_label
from reprobot.bot.store.records import Records
from tests.bot.github.scenario import (
    INSTALLATION,
    REPO,
    api_calls,
)
from tests.support.github_server import GitHubServer
from tests.support.widgets import Sources


def test_the_app_adds_its_label_once(api: RepoAPI, server: GitHubServer, records: Records) -> None:
    assert apply_label(api, records, 1, "reproduced", api.issue(1).labels, "reproduced")
    assert not apply_label(api, records, 1, "reproduced", api.issue(1).labels, "reproduced")

    assert server.issue_labels(REPO, 1) == ["reproduced"]
    (label,) = server.repo_labels(REPO)
    assert (label["color"], label["description"]) == (
        COLORS["reproduced"],
        DESCRIPTIONS["reproduced"],
    )
    assert records.label_state(REPO, 1, "reproduced") == "added"
    adds = [c for c in api_calls(server, "POST") if c.path.endswith("/issues/1/labels")]
    assert len(adds) == 1


def test_a_label_a_person_removed_is_not_added_again(
    api: RepoAPI, server: GitHubServer, records: Records
) -> None:
    apply_label(api, records, 1, "reproduced", api.issue(1).labels, "reproduced")
    server.remove_label(REPO, 1, "reproduced")  # a person disagrees

    assert not apply_label(api, records, 1, "reproduced", api.issue(1).labels, "reproduced")
    assert server.issue_labels(REPO, 1) == []
    # Nor is it withdrawn again (there is nothing to withdraw).
    assert not withdraw_label(api, records, 1, "reproduced", api.issue(1).labels)
    assert api_calls(server, "DELETE") == []


def test_the_app_withdraws_only_labels_it_added(
    api: RepoAPI, server: GitHubServer, records: Records, sources: Sources
) -> None:
    server.add_pull(REPO, 2, "Fix", None, sources.main_sha, sources.first_sha)
    server.add_pull(REPO, 3, "Other fix", None, sources.main_sha, sources.first_sha)
    assert apply_label(api, records, 2, "fix-verified", api.pull(2).labels, "verified")
    # On #3 the label was put by someone else (not through apply_label).
    api.add_label(3, "fix-verified")

    assert not withdraw_label(api, records, 3, "fix-verified", api.pull(3).labels)
    assert server.issue_labels(REPO, 3) == ["fix-verified"]
    assert records.label_state(REPO, 3, "fix-verified") is None
    # A verified push finds the person's label there: the App does not take it over, so a
    # later failing push still leaves it alone.
    assert not apply_label(api, records, 3, "fix-verified", api.pull(3).labels, "verified")
    assert records.label_state(REPO, 3, "fix-verified") is None
    assert not withdraw_label(api, records, 3, "fix-verified", api.pull(3).labels)
    assert server.issue_labels(REPO, 3) == ["fix-verified"]

    assert withdraw_label(api, records, 2, "fix-verified", api.pull(2).labels)
    assert server.issue_labels(REPO, 2) == []
    assert records.label_state(REPO, 2, "fix-verified") == "removed"
    assert not withdraw_label(api, records, 2, "fix-verified", api.pull(2).labels)

    # Withdrawn by the App itself, not by a person: a later verdict may add it again.
    assert apply_label(api, records, 2, "fix-verified", api.pull(2).labels, "verified")
    assert server.issue_labels(REPO, 2) == ["fix-verified"]


def test_comments_of_the_apps_bot_account_count_as_its_own(app: GitHubApp) -> None:
    # GitHub may leave performed_via_github_app empty on an installation's comments; the bot
    # account's login (slug[bot]) still tells them apart from people's.
    assert app.bot_login() == "reprobot[bot]"
    gh = app.client(app.token(INSTALLATION, REPO, VERIFY_PERMISSIONS))
    api = RepoAPI(gh, REPO, app_id=-1, bot_login=app.bot_login())
    first = api.upsert_comment(1, "<!-- m -->", "<!-- m -->\nv1", None)
    assert api.upsert_comment(1, "<!-- m -->", "<!-- m -->\nv2", None) == first
    stranger = RepoAPI(gh, REPO, app_id=-1, bot_login="someone-else[bot]")
    assert stranger.upsert_comment(1, "<!-- m -->", "<!-- m -->\nv3", None) != first
