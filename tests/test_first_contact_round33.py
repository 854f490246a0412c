"""The evidence shape first-contact round 33 showed to be no proof (rapidpro's two reported
warnings): a minimal fixture written from the description, with a case that must still fire."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.conftest import GitRepo, audited

pytestmark = pytest.mark.usefixtures("private_key_dir")

FIELDS = """
from rest_framework import serializers


class LimitedDictField(serializers.DictField):
    def to_internal_value(self, data):
        if len(data) > 100:
            raise serializers.ValidationError("too many items")
        return super().to_internal_value(data)


class TranslatedTextField(LimitedDictField):
    def to_internal_value(self, data):
        if isinstance(data, str):
            data = {"eng": data}
        return super().to_internal_value(data)
"""
CALLER = """
from api import fields


class FieldsCheck:
    def check(self, fields_list, data):
        for f in fields_list:
            f.to_internal_value(data)

    def check_translated(self):
        self.check([fields.TranslatedTextField()], {"Hi": "Hi"})
"""
KEY = "HG001 api.fields.TranslatedTextField.to_internal_value"


def _validator_moved(repo: GitRepo, caller: str) -> dict[str, object]:
    """``LimitedDictField`` drops its ``to_internal_value`` (the limit becomes a validator),
    and ``caller`` stops calling it on the fields it walks."""
    repo.commit("limit dict items", {"api/__init__.py": "", "api/fields.py": FIELDS,
                                     caller: CALLER})
    fields = FIELDS.replace(
        '    def to_internal_value(self, data):\n        if len(data) > 100:\n'
        '            raise serializers.ValidationError("too many items")\n'
        '        return super().to_internal_value(data)\n',
        '    def __init__(self, **kwargs):\n'
        '        self.max_length = kwargs.pop("max_length", None)\n'
        '        super().__init__(**kwargs)\n')
    repo.commit("max_length as a validator", {
        "api/fields.py": fields,
        caller: CALLER.replace(
            "        for f in fields_list:\n            f.to_internal_value(data)\n",
            "        return [g.run_validation(data) for g in fields_list]\n")})
    return dict(audited(repo))


def test_a_django_apps_tests_module_is_no_framework_code(
    git_repo: Callable[..., GitRepo],
) -> None:
    """``api/tests.py`` (unittest collects ``test*.py``) is a user of the API: a call it
    dropped says nothing about the framework's hooks."""
    assert KEY not in _validator_moved(git_repo(), "api/tests.py")


def test_the_same_call_dropped_by_framework_code_still_counts(
    git_repo: Callable[..., GitRepo],
) -> None:
    """The loop in the package's own ``api/validation.py``: what the framework ran stopped."""
    assert KEY in _validator_moved(git_repo(), "api/validation.py")
