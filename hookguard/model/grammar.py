"""Read Python newer than the running interpreter's ``ast``: downgrade, then parse.

hookguard models a file with the stdlib :mod:`ast`, which only knows the grammar of the Python
that runs it. A checkout written for 3.12 (PEP 695 ``type`` aliases and type parameters, PEP 701
f-strings) would otherwise be "not analysed" under 3.10 or 3.11. When ``ast`` rejects a file,
libcst's native parser (which reads the newest grammar whatever the interpreter) parses it, and
the syntax the model never looks at is rewritten into older syntax that means the same to the
model, keeping every line where it was:

- type parameters (``class C[T]``, ``def f[T]``) are dropped: the model keeps no annotations;
- ``type Alias = ...`` becomes ``Alias = ...``, an alias the resolver follows;
- an f-string whose replacement fields older parsers reject (nested quotes, backslashes,
  comments) keeps its literal text and loses those fields;
- ``except*`` becomes ``except`` (3.10 cannot parse it).

Grammar newer than libcst's (Python 3.14 and 3.15) is repaired line by line instead, by
:func:`repair`: ``lazy import`` (PEP 810), template strings (PEP 750), ``except A, B:``
(PEP 758) and unpacking in comprehensions (PEP 798) become the nearest older syntax.

This module is imported (and libcst with it) only for a file the running ``ast`` rejected.
"""

from __future__ import annotations

import io
import itertools
import re
import tokenize

import libcst as cst

_LAZY = re.compile(r"^(\s*)lazy(\s+)(?=(?:import|from)\b)", re.MULTILINE)
_EXCEPT_TUPLE = re.compile(r"^(\s*except\*?\s+)(?!\()([^:#]+?,[^:#]+?)(\s*:)", re.MULTILINE)
_COMPREHENSION_UNPACK = re.compile(r"([\[{(]\s*)\*{1,2}(?=[\w.()\[\]]+\s+(?:async\s+)?for\b)")
_TEMPLATE_PREFIX = re.compile(r"^(?:[tT][rR]?|[rR][tT])$")


def repair(text: str) -> str:
    """``text`` with the newest syntax the model does not need rewritten into older syntax,
    every line kept where it was. Only for a file every parser rejected."""
    text = _LAZY.sub(lambda m: m.group(1), text)
    text = _EXCEPT_TUPLE.sub(
        lambda m: m.group(1) + ("(" + m.group(2) + ")" if " as " not in m.group(2)
                                else m.group(2)) + m.group(3), text)
    text = _COMPREHENSION_UNPACK.sub(lambda m: m.group(1), text)
    return _template_strings(text)


def _template_strings(text: str) -> str:
    """``t"..."`` -> ``f"..."``: old tokenizers read the prefix as a name before a string."""
    lines = text.splitlines(keepends=True)
    edits: list[tuple[int, int, str]] = []
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError):
        return text
    for token, following in itertools.pairwise(tokens):
        if (
            token.type == tokenize.NAME
            and _TEMPLATE_PREFIX.match(token.string)
            and following.type == tokenize.STRING
            and following.start == token.end
        ):
            row, col = token.start
            edits.append((row - 1, col, token.string.replace("t", "f").replace("T", "f")))
    for row, col, prefix in reversed(edits):
        line = lines[row]
        lines[row] = line[:col] + prefix + line[col + len(prefix):]
    return "".join(lines)


def downgrade(text: str) -> str | None:
    """``text`` rewritten into syntax the running ``ast`` parses, or None when libcst cannot
    parse it either: a real syntax error."""
    if _too_deep(text):
        return None  # libcst's native parser recurses in C: deep nesting would crash it
    try:
        module = cst.parse_module(text)
    except Exception:  # ParserSyntaxError, and others on odd input
        return None
    return module.visit(_Downgrade()).code


_MAX_NESTING = 100  # CPython itself refuses 200 nested brackets; real code stays far below


def _too_deep(text: str) -> bool:
    """Whether brackets or indented blocks nest deeper than real code does (a bracket inside a
    string counts too: an overestimate only means no libcst fallback for that file)."""
    depth = deepest = 0
    for char in text:
        if char in "([{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in ")]}":
            depth -= 1
    if deepest > _MAX_NESTING:
        return True
    indents = {len(line) - len(line.lstrip(" \t")) for line in text.splitlines() if line.strip()}
    return len(indents) > _MAX_NESTING


class _Downgrade(cst.CSTTransformer):
    """The rewrites listed in the module docstring; each keeps the node's line count."""

    def leave_ClassDef(self, original: cst.ClassDef, updated: cst.ClassDef) -> cst.ClassDef:
        if updated.type_parameters is None:
            return updated
        return updated.with_changes(type_parameters=None)

    def leave_FunctionDef(
        self, original: cst.FunctionDef, updated: cst.FunctionDef
    ) -> cst.FunctionDef:
        if updated.type_parameters is None:
            return updated
        return updated.with_changes(type_parameters=None)

    def leave_TypeAlias(self, original: cst.TypeAlias, updated: cst.TypeAlias) -> cst.Assign:
        return cst.Assign(
            targets=[cst.AssignTarget(target=updated.name)],
            value=updated.value,
            semicolon=updated.semicolon,
        )

    def leave_FormattedString(
        self, original: cst.FormattedString, updated: cst.FormattedString
    ) -> cst.BaseExpression:
        quote = updated.quote
        if not any(
            isinstance(part, cst.FormattedStringExpression) and _needs_new_grammar(part, quote)
            for part in updated.parts
        ):
            return updated
        parts: list[cst.BaseFormattedStringContent] = []
        for part in updated.parts:
            if isinstance(part, cst.FormattedStringExpression):
                parts.append(cst.FormattedStringExpression(expression=cst.Name("_")))
            else:
                parts.append(part)
        return updated.with_changes(parts=parts)

    def leave_TryStar(self, original: cst.TryStar, updated: cst.TryStar) -> cst.Try:
        handlers = [
            cst.ExceptHandler(
                body=h.body, type=h.type, name=h.name, leading_lines=h.leading_lines,
                whitespace_after_except=cst.SimpleWhitespace(" "),
                whitespace_before_colon=h.whitespace_before_colon,
            )
            for h in updated.handlers
        ]
        return cst.Try(
            body=updated.body, handlers=handlers, orelse=updated.orelse,
            finalbody=updated.finalbody, leading_lines=updated.leading_lines,
            whitespace_before_colon=updated.whitespace_before_colon,
        )


def _needs_new_grammar(part: cst.FormattedStringExpression, quote: str) -> bool:
    code = cst.Module(body=[]).code_for_node(part.expression)
    return quote[0] in code or "\\" in code or "#" in code or "\n" in code
