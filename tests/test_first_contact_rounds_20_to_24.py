"""The evidence shapes first-contact rounds 20 to 24 showed to be no proof, each with a case that
must fire (the proof holds) and one that must not be an error: minimal fixtures written from
the description, not copies of the repositories."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from hookguard.findings import Severity
from tests.conftest import GitRepo, audited

pytestmark = pytest.mark.usefixtures("private_key_dir")

CURSOR = '''
class Cursor:
    def __init__(self, connection, base):
        self.connection = connection
        self.base = base
        self.entries = []

    def search(self, attributes=None):
        """Perform the search.

        :return: the entries found
        """
        self.entries = []
        scope = "subtree"
        self._execute_query(scope, attributes)
        return self.entries

    def _execute_query(self, scope, attributes):
        self.entries = self.connection.search(self.base, scope)


class Reader(Cursor):
    kind = "reader"


class Writer(Cursor):
    kind = "writer"
'''

CONNECTION = '''
class Connection:
    def __init__(self, entries):
        self.entries = entries

    def search(self, base, scope):
        return [e for e in self.entries if e.endswith(base)]
'''

# The commit moves ``class Reader(Cursor):`` (and ``_execute_query``) above ``search``: as git
# diffs it, the method goes from the base to the subclass without one of its lines changing,
# and ``_execute_query``'s member call ``self.connection.search(...)`` is removed and added.
MOVED_DOWN = '''
class Cursor:
    def __init__(self, connection, base):
        self.connection = connection
        self.base = base
        self.entries = []

    def _execute_query(self, scope, attributes):
        self.entries = self.connection.search(self.base, scope)


class Reader(Cursor):
    kind = "reader"

    def search(self, attributes=None):
        """Perform the search.

        :return: the entries found
        """
        self.entries = []
        scope = "subtree"
        self._execute_query(scope, attributes)
        return self.entries


class Writer(Cursor):
    kind = "writer"
'''


def test_a_method_moved_down_into_a_subclass_overrides_nothing(
    git_repo: Callable[..., GitRepo],
) -> None:
    """ldap3's ``Reader.search`` (round 22): the commit that took ``search`` off ``Cursor`` gave
    it to ``Reader``; it never was an override of a hook the base had (criterion 2)."""
    repo = git_repo()
    repo.commit("cursors", {"pkg/__init__.py": "", "pkg/cursor.py": CURSOR.lstrip(),
                            "pkg/connection.py": CONNECTION})
    repo.commit("Writer cursor can only write, not search any more",
                {"pkg/cursor.py": MOVED_DOWN.lstrip()})
    assert "HG001 pkg.cursor.Reader.search" not in audited(repo)
    assert "+    def search" not in repo.git("show", "HEAD", "--", "pkg/cursor.py")  # not written


OWN_SEARCH = '''
class Cursor:
    def __init__(self, connection, base):
        self.connection = connection
        self.base = base
        self.entries = []

    def refresh(self):
        return self.search()

    def search(self, attributes=None):
        self.entries = self.connection.search(self.base, "subtree")
        return self.entries


class Reader(Cursor):
    kind = "reader"

    def search(self, attributes=None):
        self.entries = self.connection.search(self.base, "base")
        return self.entries
'''


def test_an_override_older_than_the_removal_is_still_stale(
    git_repo: Callable[..., GitRepo],
) -> None:
    """The same removal where ``Reader`` had its own ``search`` while ``Cursor.refresh`` called
    it: written for the hook, left behind when the base stopped calling it."""
    repo = git_repo()
    repo.commit("cursors", {"pkg/__init__.py": "", "pkg/cursor.py": OWN_SEARCH,
                            "pkg/connection.py": CONNECTION})
    repo.commit("Cursors refresh by query", {"pkg/cursor.py": OWN_SEARCH.replace(
        "        return self.search()\n\n    def search(self, attributes=None):\n"
        "        self.entries = self.connection.search(self.base, \"subtree\")\n"
        "        return self.entries\n",
        "        self.entries = self.connection.search(self.base, \"subtree\")\n"
        "        return self.entries\n")})
    assert "def refresh(self):\n        self.entries" in repo.git("show", "HEAD:pkg/cursor.py")
    found = audited(repo)["HG001 pkg.cursor.Reader.search"]
    assert found.severity is Severity.ERROR, found.message


def _patch(repo: GitRepo, before: str, after: str) -> bytes:
    repo.commit("before", {"pkg/__init__.py": "", "pkg/cursor.py": before})
    repo.commit("after", {"pkg/cursor.py": after})
    return repo.git("show", "--format=", "-p", "-U0", "--no-color", "HEAD").encode()


def test_a_member_call_line_moved_within_its_file_is_no_dropped_call(
    git_repo: Callable[..., GitRepo],
) -> None:
    """ldap3's commit moved ``self.connection.search(...)`` with the method around it: the
    ``-U0`` patch removes the line and adds it back. A call still made is no call dropped."""
    from hookguard.git.changes import forwarded_member_call

    patch = _patch(git_repo(), CURSOR.lstrip(), MOVED_DOWN.lstrip())
    assert b"-        self.entries = self.connection.search(" in patch
    assert not forwarded_member_call(patch, "search")


def test_a_member_call_line_the_commit_deletes_is_a_dropped_call(
    git_repo: Callable[..., GitRepo],
) -> None:
    from hookguard.git.changes import forwarded_member_call

    dropped = CURSOR.lstrip().replace(
        "        self.entries = self.connection.search(self.base, scope)\n",
        "        self.entries = []\n")
    assert forwarded_member_call(_patch(git_repo(), CURSOR.lstrip(), dropped), "search")


# -- round 24: a base's placeholder that calls its own name ----------------------------------
PRIMITIVES = '''from pkg.items import LengthSubItem


class ServiceParameter:
    def from_primitive(self):
        return self.from_primitive()


class LengthNotification(ServiceParameter):
    def __init__(self):
        self.length = 0

    def from_primitive(self):
        item = LengthSubItem()
        item.from_primitive(self)
        return item
'''

ITEMS = '''class LengthSubItem:
    def from_primitive(self, primitive):
        self.length = primitive.length


class UserInformationItem:
    def __init__(self):
        self.user_data = []

    def from_primitive(self, primitive):
        for item in primitive:
            self.user_data.append(item.from_primitive())
'''


def test_a_placeholder_calling_its_own_name_is_no_call_of_the_hook(
    git_repo: Callable[..., GitRepo],
) -> None:
    """pynetdicom's ``ServiceParameter.from_primitive`` (round 24): its body calls
    ``self.from_primitive()``, which runs only once something else has called it. Dropping it
    stops no call; the subclasses' methods are still called (``item.from_primitive()``)."""
    repo = git_repo()
    repo.commit("service parameters and items", {
        "pkg/__init__.py": "", "pkg/primitives.py": PRIMITIVES, "pkg/items.py": ITEMS})
    repo.commit("drop the placeholder from ServiceParameter", {
        "pkg/primitives.py": PRIMITIVES.replace(
            "    def from_primitive(self):\n        return self.from_primitive()\n\n\n"
            "class LengthNotification", "    pass\n\n\nclass LengthNotification")})
    assert "HG001 pkg.primitives.LengthNotification.from_primitive" not in audited(repo)


def test_a_caller_of_the_hook_the_base_drops_still_proves_it(
    git_repo: Callable[..., GitRepo],
) -> None:
    """The same removal where another method of the base called the hook: it stopped."""
    calling = PRIMITIVES.replace(
        "    def from_primitive(self):\n        return self.from_primitive()\n",
        "    def encode(self):\n        return self.from_primitive()\n\n"
        "    def from_primitive(self):\n        raise NotImplementedError\n")
    repo = git_repo()
    repo.commit("service parameters", {
        "pkg/__init__.py": "", "pkg/primitives.py": calling,
        "pkg/items.py": ITEMS.replace("item.from_primitive()", "item.to_primitive()")})
    repo.commit("drop the hook from ServiceParameter", {"pkg/primitives.py": calling.replace(
        "    def encode(self):\n        return self.from_primitive()\n\n"
        "    def from_primitive(self):\n        raise NotImplementedError\n", "    pass\n")})
    found = audited(repo)["HG001 pkg.primitives.LengthNotification.from_primitive"]
    assert found.severity is Severity.ERROR, found.message
