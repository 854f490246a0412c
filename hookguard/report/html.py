"""One self-contained HTML page for CI artifacts (``hookguard report --html FILE``).

Everything is inline: the styles, a few lines of script for the filter box, and the code each
finding points at. The page makes no network request when it is opened; its only outbound
references are plain links a reader may follow (the file on GitHub when the report is made in
GitHub Actions, else the file beside the checkout).

Sections: the summary; the findings, each linked to an excerpt of its code on the page; each
affected family's hook map (who overrides what, which overrides are dead, drifted or bypass
the base); input problems (files not analysed, and classes whose bases did not resolve in files
that were analysed); notes. Text from the checkout is escaped twice over: control
characters by :func:`~hookguard.report.escape.printable`, markup by :func:`html.escape`.
"""

from __future__ import annotations

import html
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from urllib.parse import quote

from hookguard import __version__
from hookguard.commands.common import file_analysed
from hookguard.findings import Finding, InputError, Severity
from hookguard.hookmap import BYPASS, DRIFTED, INHERITED, STALE, WITH_SUPER, HookMap
from hookguard.report.escape import printable

CONTEXT = 3  # lines of code shown either side of a finding
MAX_EXCERPTS = 2000

_CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,sans-serif;margin:2em;color:#1f2328}
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:2em;border-bottom:1px solid #d0d7de}
table{border-collapse:collapse;margin:.5em 0}
table.hookmap{display:block;overflow-x:auto;max-width:100%}
th,td{border:1px solid #d0d7de;padding:.25em .6em;text-align:left;vertical-align:top}
th{background:#f6f8fa}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:12.5px}
pre{background:#f6f8fa;padding:.5em;overflow-x:auto;margin:.25em 0 1em}
.error{color:#cf222e;font-weight:600}.warning{color:#9a6700;font-weight:600}
.stale,.drifted{background:#ffebe9}.bypass{background:#fff8c5}.super{color:#1a7f37}
.inherited{color:#8c959f}.hit{background:#fff8c5;display:block}
.badge{border-radius:1em;padding:0 .5em;border:1px solid currentColor;font-size:.85em}
:target{outline:2px solid #0969da}
#filter{padding:.3em;width:24em}
"""

_SCRIPT = """
document.getElementById('filter').addEventListener('input', function (event) {
  var needle = event.target.value.toLowerCase();
  var rows = document.querySelectorAll('#findings tbody tr');
  var shown = 0;
  rows.forEach(function (row) {
    var hit = row.textContent.toLowerCase().indexOf(needle) !== -1;
    row.hidden = !hit;
    if (hit) { shown += 1; }
  });
  document.getElementById('shown').textContent = String(shown);
});
"""


def _e(text: object) -> str:
    return html.escape(printable(str(text)), quote=True)


def code_link_base(root: Path, html_path: Path) -> Callable[[str, int], str]:
    """Where a finding's external link points: the file on GitHub when running in GitHub
    Actions (``GITHUB_SERVER_URL``, ``GITHUB_REPOSITORY``, ``GITHUB_SHA``), else the file in the
    checkout, relative to the page."""
    server, repository, sha = (os.environ.get(k, "") for k in
                               ("GITHUB_SERVER_URL", "GITHUB_REPOSITORY", "GITHUB_SHA"))
    if server and repository and sha:
        def github(path: str, line: int) -> str:
            quoted = quote(path, errors="surrogateescape")
            return f"{server}/{repository}/blob/{sha}/{quoted}#L{line}"

        return github
    try:
        prefix = Path(os.path.relpath(root, html_path.resolve().parent)).as_posix()
    except ValueError:
        prefix = root.as_uri()

    def local(path: str, line: int) -> str:
        return quote(f"{prefix}/{path}", errors="surrogateescape") + f"#L{line}"

    return local


def render_html(
    findings: Sequence[Finding],
    errors: Sequence[InputError],
    notes: Sequence[str],
    summary: str,
    root: Path,
    hook_maps: Sequence[HookMap] = (),
    dead: dict[str, list[Finding]] | None = None,
    link: Callable[[str, int], str] | None = None,
) -> str:
    """The page. ``hook_maps``: one per affected family; ``dead``: per family base, its
    stale overrides (those of removed hooks are not in any map column)."""
    link = link or code_link_base(root, root / "hookguard-report.html")
    dead = dead or {}
    n_err = sum(f.severity is Severity.ERROR for f in findings)
    out: list[str] = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        # No fetch of any kind: scripts and styles only inline, nothing else.
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
        "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">",
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>hookguard report: {n_err} error{'s' * (n_err != 1)}</title>",
        f"<style>{_CSS}</style></head><body>",
        f"<h1>hookguard report</h1><p id=\"summary\">{_e(summary)}</p>",
        f"<p>Checkout: <code>{_e(root)}</code>. hookguard {_e(__version__)}.</p>",
    ]
    out += _findings(findings, link)
    out += _families(hook_maps, dead)
    if errors:
        out += _input_problems(errors, link)
    if notes:
        out.append('<h2 id="notes">Notes</h2><ul>')
        out += [f"<li>{_e(note)}</li>" for note in notes]
        out.append("</ul>")
    out += _excerpts(findings, root, link)
    out.append(f"<script>{_SCRIPT}</script></body></html>")
    return "\n".join(out) + "\n"


def _input_problems(
    errors: Sequence[InputError], link: Callable[[str, int], str]
) -> list[str]:
    """Each input problem, saying whether its file was analysed: one that does not parse was
    not (and fails the run); one whose class has a base that does not resolve was."""
    skipped = sum(not file_analysed(e) for e in errors)
    out = [f'<h2 id="input-problems">Input problems ({len(errors)})</h2>',
           f"<p>{skipped} file{'s' * (skipped != 1)} not analysed (the run fails), "
           f"{len(errors) - skipped} other input problem{'s' * (len(errors) - skipped != 1)} "
           "in files that were analysed.</p>",
           "<table><thead><tr><th>location</th><th>file</th><th>problem</th></tr></thead>"
           "<tbody>"]
    for error in errors:
        analysed = file_analysed(error)
        state = ('<td class="analysed">analysed</td>' if analysed
                 else '<td class="error">not analysed</td>')
        out.append(f'<tr class="input-problem"><td><a href="'
                   f'{_e(link(error.path, max(error.line, 1)))}">'
                   f"<code>{_e(error.path)}:{error.line}</code></a></td>{state}"
                   f"<td>{_e(error.message)}</td></tr>")
    out.append("</tbody></table>")
    return out


def _findings(findings: Sequence[Finding], link: Callable[[str, int], str]) -> list[str]:
    out = [
        f'<h2 id="findings-heading">Findings ({len(findings)})</h2>',
        '<p><label>Filter: <input id="filter" type="search" placeholder="code, file, class, '
        f'text"></label> showing <span id="shown">{len(findings)}</span> of {len(findings)}</p>',
        '<table id="findings"><thead><tr><th>code</th><th>severity</th><th>location</th>'
        "<th>symbol</th><th>message</th></tr></thead><tbody>",
    ]
    for i, f in enumerate(findings):
        anchor = f"finding-{i}" if i < MAX_EXCERPTS else ""
        target = f"#{anchor}" if anchor else link(f.path, f.line)
        out.append(
            f'<tr class="finding" data-code="{_e(f.code)}">'
            f"<td>{_e(f.code)} {_e(f.rule)}</td>"
            f'<td class="{_e(f.severity.value)}">{_e(f.severity.value)}</td>'
            f'<td><a class="location" href="{_e(target)}"><code>{_e(f.path)}:{f.line}</code>'
            "</a></td>"
            f"<td><code>{_e(f.symbol)}</code></td><td>{_e(f.message)}</td></tr>"
        )
    out.append("</tbody></table>")
    return out


def _families(hook_maps: Sequence[HookMap], dead: dict[str, list[Finding]]) -> list[str]:
    if not hook_maps:
        return []
    out = [f'<h2 id="families">Hook maps of the affected families ({len(hook_maps)})</h2>',
           "<p>Each base class's hooks against the subclasses that override them: "
           '<span class="super">super()</span>: the override calls the base hook; '
           '<span class="stale">stale</span>: a dead override of the hook\'s old name, which '
           'never runs; <span class="drifted">drifted</span>: cannot accept the base\'s calls; '
           '<span class="bypass">bypass</span>: skips state the hook sets.</p>']
    for n, hook_map in enumerate(hook_maps):
        base = hook_map.base
        problems, overriding, inheriting = hook_map.groups()
        out.append(
            f'<section class="family" id="family-{n}"><h3><code>{_e(base.fq)}</code></h3>'
            f"<p><code>{_e(base.file.path)}:{base.record.line}</code>: {len(hook_map.hooks)} "
            f"hooks, {len(hook_map.subclasses)} subclasses ({len(problems)} with problems, "
            f"{len(overriding)} overriding without one, {len(inheriting)} inheriting every "
            "hook)</p>"
        )
        shown = [*problems, *overriding]
        if shown:
            out.append('<table class="hookmap"><thead><tr><th>subclass</th>')
            out += [f"<th><code>{_e(h)}</code></th>" for h in hook_map.hooks]
            out.append("</tr></thead><tbody>")
            for sub in shown:
                out.append(f'<tr><th><code>{_e(sub.name)}</code><br>'
                           f'<small>{_e(sub.file.path)}:{sub.record.line}</small></th>')
                for hook in hook_map.hooks:
                    status = hook_map.cells[hook][sub.fq]
                    detail = hook_map.notes[hook].get(sub.fq, "")
                    css = {WITH_SUPER: "super", INHERITED: "inherited"}.get(status, status)
                    label = "dead override" if status == STALE else status
                    title = f' title="{_e(detail)}"' if detail else ""
                    out.append(f'<td class="{_e(css)}"{title}>{_e(label)}'
                               + (f"<br><small>{_e(detail)}</small>"
                                  if status in (STALE, DRIFTED, BYPASS) and detail else "")
                               + "</td>")
                out.append("</tr>")
            out.append("</tbody></table>")
        removed = [f for f in dead.get(base.fq, []) if not f.evidence.get("new")]
        if removed:
            out.append("<p>Dead overrides of hooks the base removed:</p><ul>")
            out += [f'<li class="stale"><code>{_e(f.symbol)}</code> '
                    f"(<code>{_e(f.path)}:{f.line}</code>): dead override, "
                    f"<code>{_e(f.hook)}</code> was removed</li>" for f in removed]
            out.append("</ul>")
        if inheriting:
            out.append(f"<p class=\"inherited\">Inheriting every hook ({len(inheriting)}): "
                       + ", ".join(f"<code>{_e(s.name)}</code>" for s in inheriting) + "</p>")
        out.append("</section>")
    return out


def _excerpts(
    findings: Sequence[Finding], root: Path, link: Callable[[str, int], str]
) -> list[str]:
    if not findings:
        return []
    out = ['<h2 id="code">Code</h2>']
    texts: dict[str, list[str] | None] = {}
    for i, f in enumerate(findings[:MAX_EXCERPTS]):
        if f.path not in texts:
            try:
                data = (root / f.path).read_bytes()
                texts[f.path] = data.decode("utf-8", errors="replace").splitlines()
            except OSError:
                texts[f.path] = None
        lines = texts[f.path]
        out.append(
            f'<div class="excerpt" id="finding-{i}"><p><span class="{_e(f.severity.value)}">'
            f"{_e(f.code)}</span> <a class=\"source\" href=\"{_e(link(f.path, f.line))}\">"
            f"<code>{_e(f.path)}:{f.line}</code></a> {_e(f.message)}</p>"
        )
        if lines is None:
            out.append("<p><em>the file could not be read when the report was made</em></p>")
        else:
            first, last = max(1, f.line - CONTEXT), min(len(lines), f.line + CONTEXT)
            body = "".join(
                f'<span class="{"hit" if n == f.line else "line"}">{n:>5}  '
                f"{_e(lines[n - 1].expandtabs(4))}</span>" + ("" if n == f.line else "\n")
                for n in range(first, last + 1)
            )
            out.append(f"<pre><code>{body}</code></pre>")
        out.append("</div>")
    return out
