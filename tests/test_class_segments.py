"""The text cuts HG002's history criterion reads old class versions through: a top-level class
cut out of a file (``class_segment``) and cut down to the blocks naming a hook
(``methods_naming``). Each cut must parse alone and keep exactly what names the word."""

from __future__ import annotations

import ast

from hookguard.git.blobs import class_segment, methods_naming

SOURCE = b'''import os


class Printer:
    """Prints."""

    printmethod = "_print"

    @staticmethod
    def helper(x):
        return x

    def _print_Add(self, expr):
        return self._print(expr.args)

    async def _print_Mul(self, expr):
        # _print_Add is not called here
        return "*"

    @property
    @cached
    def settings(self):
        return {"order": None}


class Other(Printer):
    def _print_Add(self, expr):
        return "other"
'''


def _cut(word: str) -> ast.ClassDef:
    """``Printer`` cut out of ``SOURCE`` and down to the blocks naming ``word``, parsed."""
    segment = class_segment(SOURCE, "Printer")
    assert segment is not None
    cut = methods_naming(segment, word)
    assert cut is not None
    tree = ast.parse(cut).body[0]
    assert isinstance(tree, ast.ClassDef)
    return tree


def test_class_segment_cuts_the_top_level_class_to_the_next_column_zero_line() -> None:
    segment = class_segment(SOURCE, "Printer")
    assert segment is not None
    assert segment.startswith(b"class Printer:\n")
    assert b"class Other" not in segment
    assert ast.parse(segment).body[0].name == "Printer"  # type: ignore[attr-defined]


def test_class_segment_refuses_a_missing_a_repeated_or_an_indented_head() -> None:
    assert class_segment(SOURCE, "Missing") is None
    assert class_segment(SOURCE + b"\nclass Printer:\n    pass\n", "Printer") is None
    nested = b"def f():\n    class Printer:\n        pass\n"
    assert class_segment(nested, "Printer") is None  # not at a line's start: not top-level
    assert class_segment(b"class PrinterBase:\n    pass\n", "Printer") is None  # a word


def test_class_segment_at_the_start_of_the_file_and_with_crlf_line_ends() -> None:
    data = b"class Printer:\r\n    def f(self):\r\n        pass\r\nx = 1\r\n"
    segment = class_segment(data, "Printer")
    assert segment == b"class Printer:\r\n    def f(self):\r\n        pass\r\n"


def test_methods_naming_keeps_the_head_and_the_blocks_that_name_the_word() -> None:
    tree = _cut("_print_Add")
    kept = [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    # the method itself and the async one whose comment names it; not the others
    assert kept == ["_print_Add", "_print_Mul"]
    assert isinstance(tree.body[-1], ast.Pass)


def test_methods_naming_keeps_decorators_with_their_method() -> None:
    tree = _cut("order")
    (settings,) = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    assert settings.name == "settings"
    assert [ast.unparse(d) for d in settings.decorator_list] == ["property", "cached"]


def test_methods_naming_keeps_a_statement_naming_the_word_and_nothing_else() -> None:
    tree = _cut("printmethod")
    # the docstring is a block of the body like any other: it does not name the word
    assert [type(n).__name__ for n in tree.body] == ["Assign", "Pass"]


def test_methods_naming_gives_up_without_an_indented_def() -> None:
    assert methods_naming(b"class Printer:\n    x = 1\n", "x") is None
    # a def only in a string at column 0 of a continuation line: no body indentation
    assert methods_naming(b'class P:\n    s = """\ndef f(): pass\n"""\n', "f") is None
