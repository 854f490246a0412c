"""The text scan that rules old versions out before ``ast``: it must hold every (class, method)
pair the ``ast`` outline finds, or give up (None) and leave the decision to ``ast``."""

from __future__ import annotations

import ast
import random
import sys
import textwrap
import time
from pathlib import Path

import pytest

from hookguard.git.blobs import (
    BlobJob,
    DefCounter,
    _common,
    classes_of,
    def_owners,
    def_pairs,
    newer_grammar_possible,
    scan_pairs,
)
from tests.test_history import SOURCES

ROOT = Path(__file__).resolve().parent.parent

# Text that a reader of lines alone gets wrong: each must still give every pair ``ast`` finds.
TRICKY = {
    "docstring with a class line": '''
class A:
    """
class Fake:
    def fake(self):
    """
    def real(self):
        pass
''',
    "string continued by a backslash": """
class A:
    x = 'one \\
class Fake:'
    def real(self):
        pass
""",
    "quotes in comments and hashes in strings": """
class A:
    # don't read this as a string
    x = "# not a comment" + '#'  # it's a comment
    def real(self):
        return '''it's
class Fake:
'''
    def also(self): ...
""",
    "escaped quotes": r'''
class A:
    x = "a \" b"
    y = """ \""" still in the string
class Fake:
    """
    z = r'\''
    def real(self): ...
''',
    "prefixed literals": """
class A:
    a, b, c, d = rb'x', Br"y", f'{1}', u'''
class Fake:
'''
    def real(self): ...
""",
    "a block after a method, inside the class": """
class C:
    def first(self):
        pass
    if True:
        def second(self):
            pass
    else:
        class Inner:
            def third(self): ...
    def fourth(self): ...
""",
    "continuation lines dedented below the class": """
class C:
    value = call(1,
2)
    other = 1 + \\
3
    def kept(self): ...
""",
    "nested scopes": """
def outer():
    class InFunction:
        def method(self):
            def helper(): ...
            class Local:
                async def local(self): ...
        @property
        def prop(self): ...
class After:
    def later(self): ...
""",
    "generic heads and spacing": """
class A :
    def  spaced (self): ...
    async  def  awaited(self): ...
    def typed(self, x: int) -> int: ...
""",
    "tabs": "class A:\n\tdef tabbed(self):\n\t\tpass\n\tdef next(self): pass\n",
}

# Text the scan cannot read with certainty: it gives up.
UNREADABLE = {
    "unterminated triple quote": 'class A:\n    x = """\n    def m(self): ...\n',
    "form feed": "class A:\n    pass\n\x0cdef f(): ...\n",
    "head split by a backslash": "class \\\n  A:\n    def m(self): ...\n",
    "name that is not ASCII": "class Caf\xe9:\n    def m(self): ...\n",
    "unterminated single quote": "class A:\n    x = 'abc\n    def m(self): ...\n",
}


def _ast_pairs(text: str) -> set[tuple[str, str]]:
    return def_pairs(ast.parse(text))


@pytest.mark.parametrize("name", sorted(TRICKY))
def test_scan_holds_every_pair_the_outline_finds(name: str) -> None:
    text = TRICKY[name]
    scanned = scan_pairs(text.encode())
    assert scanned is not None, name
    assert _ast_pairs(text) <= scanned, name
    assert not any(cls == "Fake" or method == "fake" for cls, method in scanned), name


def test_scan_on_the_outline_sources_and_line_endings() -> None:
    for name, source in SOURCES.items():
        text = textwrap.dedent(source)
        for variant in (text, text.replace("\n", "\r\n"), text.replace("\n", "\r"),
                        "\ufeff" + text):
            scanned = scan_pairs(variant.encode())
            assert scanned is not None and _ast_pairs(text) <= scanned, name


def test_scan_pairs_a_def_with_every_open_class() -> None:
    generic = b"class A[T]:\n    def generic[U](self, x: U) -> T: ...\n"  # Python 3.12
    assert scan_pairs(generic) == {("A", "generic")}
    scanned = scan_pairs(TRICKY["a block after a method, inside the class"].encode())
    assert scanned is not None
    assert {("C", "first"), ("C", "second"), ("Inner", "third"), ("C", "fourth")} <= scanned
    # A def nested in a method still pairs with the class (a superset, never a miss) ...
    nested = scan_pairs(TRICKY["nested scopes"].encode())
    assert nested is not None and ("InFunction", "helper") in nested
    # ... but never with a class whose block has ended, nor a function with no class open.
    assert ("After", "later") in nested and ("InFunction", "later") not in nested
    assert ("Local", "local") in nested and ("InFunction", "prop") in nested
    assert not any(method == "outer" for _, method in nested)


@pytest.mark.parametrize("name", sorted(UNREADABLE))
def test_scan_gives_up_where_it_could_be_wrong(name: str) -> None:
    assert scan_pairs(UNREADABLE[name].encode("utf-8")) is None, name


def test_scan_holds_every_pair_in_this_repository() -> None:
    files = sorted((ROOT / "hookguard").rglob("*.py")) + sorted((ROOT / "tests").rglob("*.py"))
    assert len(files) > 50
    readable = 0
    for path in files:
        data = path.read_bytes()
        scanned = scan_pairs(data)
        if scanned is None:
            continue
        readable += 1
        assert def_pairs(ast.parse(data)) <= scanned, path
    assert readable > len(files) * 0.8


def test_scan_rules_out_python_2_blobs_only_when_no_probe_is_there() -> None:
    python2 = b"print 'x'\nclass A:\n    def gone(self):\n        pass\n"
    with pytest.raises(SyntaxError):
        ast.parse(python2)
    assert scan_pairs(python2) == {("A", "gone")}
    # Extraction cannot read it either, so "no classes" and "ruled out" answer alike.
    assert classes_of(BlobJob("p.py", "p", False, python2, frozenset({("A", "gone")}))) == {}
    assert classes_of(BlobJob("p.py", "p", False, python2, frozenset({("A", "other")}))) is None
    # When the scan gives up, ``ast`` still rules out what it can.
    unreadable = b"class A:\n    def m(self): ...\n\x0cx = 1\n"
    assert scan_pairs(unreadable) is None
    assert classes_of(BlobJob("u.py", "u", False, unreadable,
                              frozenset({("A", "other")}))) is None
    full = classes_of(BlobJob("u.py", "u", False, unreadable, frozenset({("A", "m")})))
    assert full is not None and "m" in full["A"].methods


# Syntax one Python newer than the interpreter running the tests.
NEWER = {10: "class C:\n    def m(self):\n        try:\n            pass\n"
             "        except* ValueError:\n            pass\n",
         11: "class C[T]:\n    def m(self):\n        pass\n",
         12: "class C[T]:\n    def m(self):\n        pass\n\ntype A = int\n",
         13: "class C:\n    def m(self):\n        return t'{self}'\n",
         14: "lazy import os\n\n\nclass C:\n    def m(self):\n        pass\n"}


@pytest.mark.skipif(sys.version_info.minor not in NEWER, reason="no newer syntax listed")
def test_an_old_version_is_not_read_as_newer_python() -> None:
    """A version the running ``ast`` rejects is repaired as newer Python only when it was
    committed late enough to hold it; an older one is old Python (Python 2), left unread."""
    data = NEWER[sys.version_info.minor].encode()
    with pytest.raises(SyntaxError):
        ast.parse(data)
    recent = classes_of(BlobJob("new.py", "new", False, data, when=int(time.time())))
    assert recent is not None and "m" in recent["C"].methods
    assert classes_of(BlobJob("new.py", "new", False, data)) == recent  # time unknown
    assert classes_of(BlobJob("old.py", "old", False, data, when=1262304000)) == {}  # 2010
    assert newer_grammar_possible(0) and not newer_grammar_possible(1262304000)


def test_def_owners_counts_defs_under_each_top_level_class() -> None:
    source = textwrap.dedent('''
        import x


        def hook():  # a module-level function: no class
            def hook(): ...


        @decorated
        class A(Base):
            """A docstring naming def hook(self) is no def."""

            def hook(self): ...
            async  def hook(self): ...  # (spacing of every kind)
            # def hook(self): a comment is no def
            x = "def hook(self)"

            class Inner:
                def hook(self): ...


        class B:
            def other(self): ...
            def\thook(self, more): ...
            def hooked(self): ...
        ''').encode()
    got = def_owners(source, frozenset({b"hook", b"missing"}))
    assert got == {b"hook": {b"": 2, b"A": 3, b"B": 1}}
    assert def_owners(source, frozenset({b"absent"})) == {}


# Lines a file's versions are made of, for the edits below: class heads (top level, nested,
# decorated), defs of wanted and other names at every indentation (async, tabs, odd spacing),
# column-0 code that ends a class, comments and strings naming defs, CRLF, blank lines.
_LINES = [
    "class A(Base):", "class B:", "class Hooked:", "@decorated", "classify = 1",
    "def hook():", "async def hook():", "    def hook(self):", "    async  def hook(self):",
    "\tdef hook(self):", "        def hook(self):", "    def other(self):", "    def hooked(self):",
    "    def\thook(self, more):", "    # def hook(self): a comment", '    x = "def hook(self)"',
    "    return 1", "x = 2", ")", "if TYPE_CHECKING:", "    class Inner:", "", "# comment",
    "    pass\r", "def other():", "    undef hook(self)", "  def hook(self):  # two spaces",
]


def _versions(seed: int, count: int) -> list[bytes]:
    """A file's versions, newest first: each an edit of the one before (lines added, removed
    or replaced, one place or several, at the start and the end too)."""
    rng = random.Random(seed)
    lines = [rng.choice(_LINES) for _ in range(rng.randint(0, 60))]
    versions = []
    for _ in range(count):
        for _ in range(rng.choice((1, 1, 2, 3))):
            at = rng.choice((0, len(lines), rng.randint(0, len(lines))))
            kind = rng.randrange(3)
            if kind == 0 or not lines:
                lines[at:at] = [rng.choice(_LINES) for _ in range(rng.randint(1, 4))]
            elif kind == 1:
                del lines[at:at + rng.randint(1, 3)]
            else:
                lines[at:at + 1] = [rng.choice(_LINES)]
        text = "\n".join(lines) + rng.choice(("\n", "", "\n\n"))
        versions.append(text.encode())
    return versions


@pytest.mark.parametrize("seed", range(40))
def test_def_counter_reads_each_version_as_a_fresh_count_would(seed: int) -> None:
    """The incremental count (only what differs from the version before is read again)
    agrees with counting each version on its own, whatever the edits."""
    names = frozenset({b"hook", b"other"})
    counter = DefCounter(names)
    for version in _versions(seed, 30):
        assert counter.count(version) == DefCounter(names).count(version)


def test_common_prefix_and_suffix_at_every_scale() -> None:
    rng = random.Random(7)
    for size in (0, 1, 255, 256, 257, 4095, 4096, 5000, 70000, 300000):
        old = bytes(rng.randrange(256) for _ in range(size))
        for at in {0, size // 3, size - 1, size} - {-1}:
            new = old[:at] + b"\x00\x01" + old[at + 1:]
            most = min(len(old), len(new))
            head = _common(old, new, most, 0)
            tail = _common(old, new, most - head, 1)
            assert head == _shared(old, new)
            assert tail == min(_shared(old[::-1], new[::-1]), most - head)


def _shared(a: bytes, b: bytes) -> int:
    """The common prefix's length, byte by byte."""
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n
