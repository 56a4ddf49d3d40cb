"""Drafted tests in the shape the project's runner collects: ``TestCase`` methods for the unittest
family (Django's runners included), pytest functions otherwise. The pure writing first, then
issues reproduced end to end on a unittest-only project and on a Django-style framework run by
its own ``tests/runtests.py``, each fix verified."""

from __future__ import annotations

import ast
from pathlib import Path

import docker
import pytest

from reprobot.generation.drafter.test_style import (
    APPROX_HELPER,
    DJANGO,
    PYTEST,
    UNITTEST,
    class_name,
    hoist_models,
    style_for,
    unittest_body,
    without_django_setup,
)
from reprobot.generation.drafter.test_writer import module_text
from reprobot.generation.issue.file import read_issue
from reprobot.generation.pool.failure_match import parse_failure
from reprobot.generation.pool.reproduce import reproduce
from reprobot.settings import Settings
from reprobot.validation.env.env_image import ensure_environment
from reprobot.validation.env.envspec import EnvSpec
from reprobot.validation.source.patch import Patch
from reprobot.validation.source.snapshot import RepoSnapshot
from reprobot.validation.verify import verify
from tests.support.django_projects import FRAMEWORK_SPEC, framework_repo
from tests.support.repos import make_repo, pyproject


@pytest.mark.parametrize(
    ("command", "style"),
    [
        ("pytest -rA", PYTEST),
        ("python -m pytest tests", PYTEST),
        ("python -m unittest discover -v", UNITTEST),
        ("./tests/runtests.py --verbosity 2 --settings=test_sqlite", DJANGO),
        ("python manage.py test -v 2", DJANGO),
        ("DJANGO_SETTINGS_MODULE=s python -m django test", DJANGO),
        ("tox -e py311", PYTEST),
    ],
)
def test_the_style_follows_the_test_command(command: str, style: object) -> None:
    assert style_for(command) == style


def test_a_body_for_pytest_becomes_a_testcase_method_body() -> None:
    body = "x = 1\nwith pytest.raises(ValueError):\n    f(x)\nassert g() == pytest.approx(2.5)"
    out = unittest_body(body, wants_tmp_path=False)
    assert "pytest" not in out
    assert "with self.assertRaises(ValueError):" in out
    assert "assert g() == _approx(2.5)" in out
    with_tmp = unittest_body("(tmp_path / 'a.cfg').write_text('x')", wants_tmp_path=True)
    assert with_tmp.splitlines()[-1] == "(tmp_path / 'a.cfg').write_text('x')"
    assert "tmp_path = _pathlib.Path(_tmp.name)" in with_tmp
    assert "self.addCleanup(_tmp.cleanup)" in with_tmp


def test_under_djangos_runner_the_reporters_own_django_setup_is_left_out() -> None:
    body = (
        "from django.conf import settings\n"
        "settings.configure(DEBUG=True,\n    USE_TZ=False)  # just to allow the import\n"
        "import django\n"
        "django.setup()\n"
        "if True:\n    settings.configure()\n"
        "x = f(settings.DEBUG)"
    )
    assert without_django_setup(body) == (
        "from django.conf import settings\n"
        "_overridden = _override_settings(DEBUG=True, USE_TZ=False)\n"
        "_overridden.enable()\nself.addCleanup(_overridden.disable)\n"
        "import django\nif True:\n    settings.configure()\nx = f(settings.DEBUG)"
    )
    assert "settings.configure" not in unittest_body("settings.configure()\nf()", False, DJANGO)
    # What the script's own configuration sets holds for the rest of the test; the apps and
    # databases stay the runner's.
    configured = without_django_setup(
        "settings.configure(USE_TZ=True, TIME_ZONE='Europe/Paris',\n"
        "                   INSTALLED_APPS=['x'], DATABASES={})\nf()"
    )
    assert configured == (
        "_overridden = _override_settings(USE_TZ=True, TIME_ZONE='Europe/Paris')\n"
        "_overridden.enable()\nself.addCleanup(_overridden.disable)\nf()"
    )
    # Outside Django's runner, a script's set-up is the reporter's code like any other.
    assert unittest_body("settings.configure()", False, UNITTEST) == "settings.configure()"
    assert without_django_setup("def broken(:") == "def broken(:"


def test_a_reporters_models_and_their_choices_move_to_the_module() -> None:
    body = (
        "class Kind(models.TextChoices):\n    A = 'a'\n"
        "@register\nclass Parent(models.Model):\n"
        "    kind = models.CharField(choices=Kind.choices)\n"
        "class Child(Parent):\n    pass\n"
        "class Helper:\n    pass\n"
        "Child.objects.create()"
    )
    models, rest = hoist_models(body)
    assert [m.split("\n")[0] for m in models] == [
        "class Kind(models.TextChoices):",
        "@register",
        "class Child(Parent):",
    ]
    assert rest == "class Helper:\n    pass\nChild.objects.create()"
    assert hoist_models("x = 1") == ([], "x = 1")
    assert hoist_models("class (:") == ([], "class (:")


def test_a_unittest_module_is_one_testcase_class_with_the_test_as_a_method() -> None:
    body = unittest_body("result = mean([1.0, 2.0])\nassert result == pytest.approx(1.5)", False)
    imports = ["import unittest as _unittest", "from stats import mean"]
    text = module_text("mean is off", imports, [], [("mean_off", body)], style=UNITTEST)
    tree = ast.parse(text)
    (cls,) = [n for n in tree.body if isinstance(n, ast.ClassDef)]
    assert cls.name == "TestMeanOff"
    assert ast.unparse(cls.bases[0]) == "_unittest.TestCase"
    (method,) = cls.body
    assert isinstance(method, ast.FunctionDef)
    assert method.name == "test_mean_off"
    assert [a.arg for a in method.args.args] == ["self"]
    # No module-level test function for pytest to find, and nothing of pytest imported.
    assert not [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("t")]
    assert "import pytest" not in text
    assert "def _approx(expected):" in text
    assert class_name("parse_duration_1h30m") == "TestParseDuration1h30m"


def test_the_approximate_comparison_without_pytest() -> None:
    space: dict[str, object] = {}
    exec("\n".join(APPROX_HELPER), space)  # the helper's own text, as a module holds it
    approx = space["_approx"]
    assert callable(approx)
    assert approx(2.5) == 2.5000000001
    assert approx(2.5) != 2.6
    assert approx([1.0, 2.0]) == (1.0000000001, 2.0)
    assert approx([1.0, 2.0]) != [1.0]
    assert approx({"a": 0.1}) == {"a": 0.1 + 1e-15}
    assert approx({"a": 0.1}) != {"b": 0.1}


def test_a_unittest_failure_is_placed_in_the_frame_that_raised() -> None:
    detail = (
        "AssertionError: expected '2.5', got 3\n"
        "Traceback (most recent call last):\n"
        '  File "/work/tests/test_median.py", line 9, in test_median\n'
        "    assert result == 2.5, 'expected ' + '2.5' + ', got ' + repr(result)\n"
        "AssertionError: expected '2.5', got 3\n"
    )
    failure = parse_failure(detail)
    assert failure.exc_type == "AssertionError"
    assert failure.raised_in == "/work/tests/test_median.py"


STATS = """\
def median(values):
    ordered = sorted(values)
    return ordered[len(ordered) // 2]
"""
STATS_FIX = """\
--- a/stats/__init__.py
+++ b/stats/__init__.py
@@ -1,3 +1,6 @@
 def median(values):
     ordered = sorted(values)
-    return ordered[len(ordered) // 2]
+    middle = len(ordered) // 2
+    if len(ordered) % 2:
+        return ordered[middle]
+    return (ordered[middle - 1] + ordered[middle]) / 2
"""
STATS_TESTS = """\
import unittest

from stats import median


class MedianTests(unittest.TestCase):
    def test_odd(self):
        self.assertEqual(median([3, 1, 2]), 2)
"""
MEDIAN_ISSUE = """\
median of an even number of values is wrong

```python
>>> from stats import median
>>> median([1, 2, 3, 4])
3
```

Expected `2.5`.
"""


def test_a_unittest_project_gets_a_testcase_that_reproduces_and_verifies_the_fix(
    docker_client: docker.DockerClient, tmp_path: Path, settings: Settings
) -> None:
    repo = make_repo(
        tmp_path / "stats",
        {
            "pyproject.toml": pyproject("stats"),
            "stats/__init__.py": STATS,
            "tests/__init__.py": "",
            "tests/test_stats.py": STATS_TESTS,
        },
    )
    base = RepoSnapshot.from_git(repo, "HEAD", "test/stats")
    spec = EnvSpec(python="3.11", test_cmd="python -m unittest discover -v")
    env = ensure_environment(docker_client, spec, base, settings)
    result = reproduce(read_issue(MEDIAN_ISSUE), base, env, settings, client=docker_client)
    assert result.reproduced, [c.reason for c in result.candidates]
    assert result.chosen is not None
    # The expected value the issue states, checked by a method of a TestCase class.
    assert result.chosen.draft.method == "issue-expected"
    (test_id,) = result.failing_tests
    path, cls, method = test_id.split("::")
    assert path.startswith("tests/") and cls.startswith("Test") and method.startswith("test_")
    assert "import pytest" not in result.test_patch
    verdict = verify(docker_client, env, base, Patch(result.test_patch), fix=Patch(STATS_FIX))
    assert verdict.status == "verified", verdict.to_json()
    assert verdict.transitions[test_id].kind == "F->P"


# slugify as a setting makes it: the issue's script configures the separator itself.
SETTING_SLUG = """\
from django.conf import settings


def slugify(text):
    return text.lower().replace(" ", getattr(settings, "SLUG_SEPARATOR", "-"))
"""
SLUG_FIX = """\
--- a/framework/text.py
+++ b/framework/text.py
@@ -4,2 +4,2 @@
 def slugify(text):
-    return text.lower().replace(" ", getattr(settings, "SLUG_SEPARATOR", "-"))
+    return text.strip().lower().replace(" ", getattr(settings, "SLUG_SEPARATOR", "-"))
"""
BASIC_TESTS = """\
from django.test import SimpleTestCase

from framework.text import slugify


class SlugTests(SimpleTestCase):
    def test_spaces(self):
        self.assertEqual(slugify("A b"), "a-b")
"""
SLUG_ISSUE = """\
slugify keeps the spaces around a title

```python
>>> from django.conf import settings
>>> settings.configure(SLUG_SEPARATOR="_")  # just to allow the import
>>> import django
>>> django.setup()
>>> from framework.text import slugify
>>> slugify(" A title ")
'_a_title_'
```

Expected `'a_title'`.
"""


def test_a_django_style_framework_gets_a_django_testcase_run_by_its_own_runtests(
    docker_client: docker.DockerClient, tmp_path: Path, settings: Settings
) -> None:
    base = framework_repo(tmp_path / "framework", BASIC_TESTS, SETTING_SLUG)
    env = ensure_environment(docker_client, FRAMEWORK_SPEC, base, settings)
    result = reproduce(read_issue(SLUG_ISSUE), base, env, settings, client=docker_client)
    assert result.reproduced, [c.reason for c in result.candidates]
    assert "from django.test import TestCase as _DjangoTestCase" in result.test_patch
    # The script's own setting holds in the test, through override_settings.
    assert '_override_settings(SLUG_SEPARATOR="_")' in result.test_patch
    (test_id,) = result.failing_tests
    # Next to the test app's own tests.py, which names slugify: a module of that app, which
    # Django's runner imports by its dotted label (basic.test_...), installing the app.
    path, cls, method = test_id.split("::")
    assert path.startswith("tests/basic/test_") and cls.startswith("Test")
    assert method.startswith("test_")
    verdict = verify(docker_client, env, base, Patch(result.test_patch), fix=Patch(SLUG_FIX))
    assert verdict.status == "verified", verdict.to_json()


MODEL_ISSUE = """\
slugify keeps the spaces of a stored title

```python
>>> from django.db import models
>>> class Article(models.Model):
...     title = models.CharField(max_length=50)
...
>>> from framework.text import slugify
>>> Article.objects.create(title=" A title ")
>>> slugify(Article.objects.get().title)
'-a-title-'
```

Expected `'a-title'`.
"""


def test_a_django_reporters_model_is_defined_in_the_test_app_with_its_table(
    docker_client: docker.DockerClient, tmp_path: Path, settings: Settings
) -> None:
    base = framework_repo(tmp_path / "framework", BASIC_TESTS)
    env = ensure_environment(docker_client, FRAMEWORK_SPEC, base, settings)
    result = reproduce(read_issue(MODEL_ISSUE), base, env, settings, client=docker_client)
    assert result.reproduced, [c.reason for c in result.candidates]
    # The model is a class of the test module, of the app "basic", so its table exists when
    # the test runs; inside the test method it would have none.
    assert "\n+class Article(models.Model):\n" in result.test_patch
    (test_id,) = result.failing_tests
    assert test_id.startswith("tests/basic/test_")
    fix = (
        "--- a/framework/text.py\n+++ b/framework/text.py\n@@ -1,2 +1,2 @@\n"
        " def slugify(text):\n"
        "-    return text.lower().replace(' ', '-')\n"
        "+    return text.strip().lower().replace(' ', '-')\n"
    )
    verdict = verify(docker_client, env, base, Patch(result.test_patch), fix=Patch(fix))
    assert verdict.status == "verified", verdict.to_json()
