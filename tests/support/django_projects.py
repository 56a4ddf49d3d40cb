"""Django projects for tests: a site run by ``manage.py test`` and a framework tested, as
Django itself is, by its own ``tests/runtests.py`` over test apps that are folders of ``tests/``."""

from __future__ import annotations

from pathlib import Path

from reprobot.validation.env.envspec import EnvSpec
from reprobot.validation.source.snapshot import RepoSnapshot
from tests.support.repos import make_repo, pyproject

SETTINGS = """\
SECRET_KEY = "test"
INSTALLED_APPS = ["django.contrib.contenttypes", "django.contrib.auth", "polls"]
DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"}}
USE_TZ = True
"""
MANAGE = """\
import os
import sys

if __name__ == "__main__":
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mysite.settings")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)
"""
RUNTESTS = """\
#!/usr/bin/env python
import argparse
import os
import sys

import django
from django.conf import settings
from django.test.utils import get_runner

# As Django's own tests/runtests.py: the test apps are modules of this folder.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
settings.configure(
    INSTALLED_APPS=["django.contrib.contenttypes", "django.contrib.auth", "basic"],
    DATABASES={"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"}},
    USE_TZ=True,
)
django.setup()
parser = argparse.ArgumentParser()
parser.add_argument("modules", nargs="*")
parser.add_argument("--verbosity", type=int, default=1)
parser.add_argument("--parallel", default="1")
options = parser.parse_args()
runner = get_runner(settings)(verbosity=options.verbosity, interactive=False)
failures = runner.run_tests(options.modules or ["basic"])
sys.exit(bool(failures))
"""


def django_pyproject(name: str, packages: str) -> str:
    return pyproject(
        name, f'dependencies = ["django>=4.2,<6"]\n\n[tool.setuptools]\npackages = [{packages}]\n'
    )


MODELS = (
    "from django.db import models\n\n\n"
    "class Tag(models.Model):\n    name = models.CharField(max_length=20)\n"
)
SLUG = "def slugify(text):\n    return text.lower().replace(' ', '-')\n"
# Run as Django's own suite is: its tests/runtests.py, over the test apps under tests/.
FRAMEWORK_SPEC = EnvSpec(python="3.11", test_cmd="./tests/runtests.py --verbosity 2")


def framework_repo(path: Path, basic_tests: str, slug: str = SLUG) -> RepoSnapshot:
    """A framework tested as Django itself is: ``framework.text.slugify`` (``slug``: by default
    one that keeps the spaces around a title), ``tests/runtests.py``, and one test app,
    ``basic``, holding ``basic_tests``."""
    repo = make_repo(
        path,
        {
            "pyproject.toml": django_pyproject("framework", '"framework"'),
            "framework/__init__.py": "",
            "framework/text.py": slug,
            "tests/runtests.py": RUNTESTS,
            "tests/basic/__init__.py": "",
            # As Django's own test apps: models of the app's tests, in its models module.
            "tests/basic/models.py": MODELS,
            "tests/basic/tests.py": basic_tests,
        },
    )
    return RepoSnapshot.from_git(repo, "HEAD", "test/framework")
