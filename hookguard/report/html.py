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
from hookguard.hookmap import (
    BYPASS,
    DRIFTED,
    INHERITED,
    OVERRIDDEN,
    PROBLEMS,
    STALE,
    WITH_SUPER,
    HookMap,
)
from hookguard.model.project import ClassInfo
from hookguard.report.escape import printable

CONTEXT = 3  # lines of code shown either side of a finding
MAX_EXCERPTS = 500  # findings past this many link to their file, with no excerpt on the page
# A family's hook grid up to GRID_ROWS subclasses and GRID_COLUMNS hooks is shown whole; a
# larger one shows the counts per hook and the subclasses with problems against the hooks they
# break (all of them), then the whole grid collapsed, cut at GRID_CELLS cells (problems first;
# at least GRID_MIN_ROWS rows): a family of 1,117 subclasses costs the page 76 kB, not 524.
GRID_ROWS = 12
GRID_COLUMNS = 8
GRID_CELLS = 1500
GRID_MIN_ROWS = 30
MAX_NAMES = 60  # subclasses that inherit every hook, named at most

# Laid out for a laptop screen: the page never scrolls sideways (1280 px and up are tested);
# tables of findings and input problems have fixed columns in which text wraps (dotted names
# at their dots first, anything else anywhere); a hook grid wider than the page scrolls in its
# own box, its subclass column kept in view.
_CSS = """
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,sans-serif;margin:0 auto;padding:1em 2em;
max-width:1600px;color:#1f2328;overflow-wrap:anywhere}
h1{font-size:1.5em;margin:.4em 0}h2{font-size:1.2em;margin-top:2em;border-bottom:1px solid #d0d7de}
h3{font-size:1.05em;margin:1.6em 0 .3em}nav a{margin-right:1em}
table{border-collapse:collapse;margin:.5em 0}
table.wide{width:100%;table-layout:fixed}
col.code{width:7.5em}col.severity{width:6.5em}col.where{width:34%}col.state{width:8em}
col.location{width:30%}
th,td{border:1px solid #d0d7de;padding:.25em .5em;text-align:left;vertical-align:top}
th{background:#f6f8fa}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:12.5px}
pre{background:#f6f8fa;padding:.5em;overflow-x:auto;margin:.25em 0 1em;overflow-wrap:normal}
.scroll{overflow-x:auto;max-width:100%}
.hookmap th,.hookmap td,.counts td,.counts th{overflow-wrap:normal}
.hookmap td{white-space:nowrap}.hookmap thead th{vertical-align:bottom;font-weight:normal}
.hookmap tbody th{position:sticky;left:0;font-weight:normal;min-width:18em;max-width:24em;
overflow-wrap:anywhere}
.counts td{text-align:right}.counts td.name,.counts td.owner{text-align:left}
.error{color:#cf222e;font-weight:600}.warning{color:#9a6700;font-weight:600}
.stale,.drifted{background:#ffebe9}.bypass{background:#fff8c5}.super{color:#1a7f37}
.inherited,.muted{color:#656d76}.hit{background:#fff8c5;display:block}
details{margin:.5em 0}summary{cursor:pointer;font-weight:600}
:target{outline:2px solid #0969da}
#filter{padding:.3em;width:24em;max-width:100%}
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


def _w(text: object, after: str) -> str:
    """:func:`_e`, with a line-break opportunity after each of ``after``'s characters (a long
    dotted name wraps at its dots first). Paths are left whole (``<code>path:line</code>``,
    which readers of the page search for): they wrap anywhere, by the style sheet."""
    out = _e(text)
    for char in after:
        out = out.replace(char, char + "<wbr>")
    return out


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
    families_left_out: int = 0,
) -> str:
    """The page. ``hook_maps``: one per affected family; ``dead``: per family base, its
    stale overrides (those of removed hooks are not in any map column);
    ``families_left_out``: affected families with no map on the page."""
    link = link or code_link_base(root, root / "hookguard-report.html")
    dead = dead or {}
    n_err = sum(f.severity is Severity.ERROR for f in findings)
    sections = [("findings-heading", "Findings")]
    if hook_maps:
        sections.append(("families", "Hook maps"))
    if errors:
        sections.append(("input-problems", "Input problems"))
    if notes:
        sections.append(("notes", "Notes"))
    if findings:
        sections.append(("code", "Code"))
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
        "<nav>" + "".join(f'<a href="#{anchor}">{title}</a>' for anchor, title in sections)
        + "</nav>",
    ]
    out += _findings(findings, link)
    rows = {f.message: i for i, f in reversed(list(enumerate(findings)))}
    out += _families(hook_maps, dead, rows, families_left_out)
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
           '<table class="wide"><colgroup><col class="location"><col class="state"><col>'
           "</colgroup><thead><tr><th>location</th><th>file</th><th>problem</th></tr></thead>"
           "<tbody>"]
    for error in errors:
        analysed = file_analysed(error)
        state = ('<td class="analysed">analysed</td>' if analysed
                 else '<td class="error">not analysed</td>')
        out.append(f'<tr class="input-problem"><td><a href="'
                   f'{_e(link(error.path, max(error.line, 1)))}">'
                   f"<code>{_e(error.path)}:{error.line}</code></a></td>{state}"
                   f'<td class="message">{_e(error.message)}</td></tr>')
    out.append("</tbody></table>")
    return out


def _findings(findings: Sequence[Finding], link: Callable[[str, int], str]) -> list[str]:
    out = [
        f'<h2 id="findings-heading">Findings ({len(findings)})</h2>',
        '<p><label>Filter: <input id="filter" type="search" placeholder="code, file, class, '
        f'text"></label> showing <span id="shown">{len(findings)}</span> of {len(findings)}</p>',
        '<table id="findings" class="wide"><colgroup><col class="code"><col class="severity">'
        '<col class="where"><col></colgroup><thead><tr><th>code</th><th>severity</th>'
        "<th>location</th><th>message</th></tr></thead><tbody>",
    ]
    for i, f in enumerate(findings):
        anchor = f"finding-{i}" if i < MAX_EXCERPTS else ""
        target = f"#{anchor}" if anchor else link(f.path, f.line)
        out.append(
            f'<tr class="finding" id="row-{i}" data-code="{_e(f.code)}">'
            f"<td>{_e(f.code)} {_e(f.rule)}</td>"
            f'<td class="{_e(f.severity.value)}">{_e(f.severity.value)}</td>'
            f'<td><a class="location" href="{_e(target)}"><code>{_e(f.path)}:{f.line}</code>'
            f'</a><br><code class="symbol">{_w(f.symbol, ".")}</code></td>'
            f'<td class="message">{_e(f.message)}</td></tr>'
        )
    out.append("</tbody></table>")
    return out


def _families(
    hook_maps: Sequence[HookMap], dead: dict[str, list[Finding]], rows: dict[str, int],
    left_out: int = 0,
) -> list[str]:
    """Each affected family: its hook grid whole when it is small; else the counts per hook,
    the subclasses with problems against the hooks they break, and the whole grid (up to
    :data:`GRID_CELLS` cells) collapsed. ``rows``: a finding's row by its message (a cell that
    drifts or bypasses links to it)."""
    if not hook_maps:
        return []
    out = [f'<h2 id="families">Hook maps of the affected families ({len(hook_maps)})</h2>',
           "<p>Each base class's hooks (the methods of its MRO that some subclass overrides) "
           "against the subclasses that override them: "
           '<span class="super">super()</span>: the override calls the base hook; '
           '<span class="stale">dead override</span>: an override of the hook\'s old name, '
           'which never runs; <span class="drifted">drifted</span>: cannot accept the base\'s '
           'calls; <span class="bypass">bypass</span>: skips state the hook sets. Large '
           "families show the counts per hook and the subclasses with problems; their whole "
           "grid is collapsed below them.</p>"]
    if left_out:
        out.append(f"<p>{left_out} more affected famil{'ies' if left_out != 1 else 'y'} "
                   "not shown (<code>hookguard hooks CLASS</code> maps any).</p>")
    for n, hook_map in enumerate(hook_maps):
        base = hook_map.base
        problems, overriding, inheriting = hook_map.groups()
        hidden = sum(len(names) for names in hook_map.hidden.values())
        out.append(
            f'<section class="family" id="family-{n}"><h3><code>{_w(base.fq, ".")}</code></h3>'
            f"<p><code>{_e(base.file.path)}:{base.record.line}</code>: "
            f"{len(hook_map.hooks)} hook{'s' * (len(hook_map.hooks) != 1)} in the map"
            + (f" ({hidden} other method{'s' * (hidden != 1)} of its MRO, never overridden, "
               "private or properties, left out)" if hidden else "")
            + f", {len(hook_map.subclasses)} subclass{'es' * (len(hook_map.subclasses) != 1)} "
            f"({len(problems)} with problems, {len(overriding)} overriding without one, "
            f"{len(inheriting)} inheriting every hook)</p>"
        )
        shown = [*problems, *overriding]
        if shown and hook_map.hooks:
            if len(shown) <= GRID_ROWS and len(hook_map.hooks) <= GRID_COLUMNS:
                out += _grid(hook_map, shown, hook_map.hooks, rows)
            else:
                out += _large_family(hook_map, problems, shown, rows)
        removed = [f for f in dead.get(base.fq, []) if not f.evidence.get("new")]
        if removed:
            out.append("<p>Dead overrides of hooks the base removed:</p><ul>")
            out += [f'<li class="stale"><code>{_w(f.symbol, ".")}</code> '
                    f"(<code>{_e(f.path)}:{f.line}</code>): dead override, "
                    f"<code>{_e(f.hook)}</code> was removed</li>" for f in removed]
            out.append("</ul>")
        if inheriting:
            names = ", ".join(f"<code>{_e(s.name)}</code>" for s in inheriting[:MAX_NAMES])
            more = len(inheriting) - MAX_NAMES
            out.append(f"<p class=\"inherited\">Inheriting every hook ({len(inheriting)}): "
                       + names + (f" and {more} more" if more > 0 else "") + "</p>")
        out.append("</section>")
    return out


def _large_family(
    hook_map: HookMap, problems: list[ClassInfo], shown: list[ClassInfo], rows: dict[str, int]
) -> list[str]:
    """A family too large for one grid on a screen: the subclasses with problems, each with the
    hooks it breaks; the counts per hook (collapsed past :data:`GRID_ROWS` hooks); the whole
    grid, collapsed and cut at :data:`GRID_CELLS` cells."""
    out: list[str] = []
    if problems:
        out.append(f"<p>Subclasses with problems ({len(problems)}):</p>"
                   '<table class="wide problems"><colgroup><col class="where"><col></colgroup>'
                   "<thead><tr><th>subclass</th><th>problems</th></tr></thead><tbody>")
        for sub in problems:
            broken = []
            for hook in hook_map.hooks:
                if hook_map.cells[hook][sub.fq] not in PROBLEMS:
                    continue
                detail = hook_map.notes[hook].get(sub.fq, "")
                if hook_map.cells[hook][sub.fq] == STALE:  # (what it defines, after the hook)
                    broken.append(f'<span class="stale">dead override</span> <code>'
                                  f"{_w(hook, '_')}</code>"
                                  + (f" <small>({_e(detail)})</small>" if detail else ""))
                else:
                    broken.append(f"{_cell(hook_map, hook, sub, rows)} <code>{_w(hook, '_')}"
                                  "</code>")
            out.append(f'<tr class="problem"><td><code>{_w(sub.name, ".")}</code><br><small>'
                       f"{_e(sub.file.path)}:{sub.record.line}</small></td>"
                       f"<td>{'<br>'.join(broken)}</td></tr>")
        out.append("</tbody></table>")
    columns = len(hook_map.hooks)
    table = ['<table class="counts"><thead><tr><th>hook</th><th>defined in</th>'
             "<th>overridden</th><th>super()</th><th>dead</th><th>drifted</th><th>bypass</th>"
             "</tr></thead><tbody>"]
    for hook in hook_map.hooks:
        counts = hook_map.counts(hook)
        overridden = sum(counts[s] for s in (OVERRIDDEN, WITH_SUPER, DRIFTED, BYPASS))
        owner = hook_map.owners.get(hook, hook_map.base)
        table.append(f'<tr><td class="name"><code>{_e(hook)}</code></td>'
                     f'<td class="owner">{_w(owner.name, "_")}</td><td>{overridden}</td>'
                     + "".join(f'<td class="{css}">{counts[s]}</td>' if counts[s]
                               else "<td>0</td>"
                               for s, css in ((WITH_SUPER, "super"), (STALE, "stale"),
                                              (DRIFTED, "drifted"), (BYPASS, "bypass")))
                     + "</tr>")
    table.append("</tbody></table>")
    if columns > GRID_ROWS:
        out.append(f'<details class="counts"><summary>Counts per hook ({columns} hooks)'
                   "</summary>")
        out += [*table, "</details>"]
    else:
        out += ["<p>Counts per hook:</p>", *table]
    limit = max(GRID_MIN_ROWS, GRID_CELLS // columns)
    out.append(f'<details class="fullmap"><summary>The whole hook map: {len(shown)} '
               f"subclass{'es' * (len(shown) != 1)} &times; {columns} hook{'s' * (columns != 1)}"
               "</summary>")
    out += _grid(hook_map, shown, hook_map.hooks, rows, limit=limit * columns)
    out.append("</details>")
    return out


_LABEL = {OVERRIDDEN: ("o", "override"), WITH_SUPER: ("super", "super()"),
          STALE: ("stale", "dead override"), DRIFTED: ("drifted", "drifted"),
          BYPASS: ("bypass", "bypass")}


def _grid(
    hook_map: HookMap, subs: Sequence[ClassInfo], hooks: Sequence[str], rows: dict[str, int],
    limit: int = 0,
) -> list[str]:
    """The grid of ``subs`` against ``hooks``; at most ``limit`` cells (0: all), then a line
    saying how many subclasses are left out and how to see them."""
    if not hooks:
        return []
    kept = list(subs)
    if limit and len(kept) * len(hooks) > limit:
        kept = kept[:max(1, limit // len(hooks))]
    out = ['<div class="scroll"><table class="hookmap"><thead><tr><th>subclass</th>']
    out += [f"<th><code>{_w(h, '_')}</code></th>" for h in hooks]
    out.append("</tr></thead><tbody>")
    for sub in kept:
        cells = [f"<tr><th><code>{_e(sub.name)}</code><br>"
                 f"<small>{_e(sub.file.path)}:{sub.record.line}</small></th>"]
        for hook in hooks:
            status = hook_map.cells[hook][sub.fq]
            if status == INHERITED:
                cells.append("<td></td>")
            else:
                cells.append(_cell(hook_map, hook, sub, rows, "td"))
        cells.append("</tr>")
        out.append("".join(cells))
    out.append("</tbody></table></div>")
    if len(kept) < len(subs):
        out.append(f'<p class="muted">{len(subs) - len(kept)} more subclasses not shown here: '
                   f"<code>hookguard hooks {_e(hook_map.base.fq)}</code> lists them all.</p>")
    return out


def _cell(
    hook_map: HookMap, hook: str, sub: ClassInfo, rows: dict[str, int], tag: str = "span"
) -> str:
    """``sub``'s status for ``hook``, as a grid cell (``td``) or in a line of text: a dead
    override says what it defines, a drifted or bypassing one links to its finding's row."""
    status = hook_map.cells[hook][sub.fq]
    css, label = _LABEL.get(status, (status, status))
    detail = hook_map.notes[hook].get(sub.fq, "")
    if status == STALE and detail:
        return f'<{tag} class="{css}">{label}<br><small>{_e(detail)}</small></{tag}>'
    if status in (DRIFTED, BYPASS) and detail in rows:
        return f'<{tag} class="{css}"><a href="#row-{rows[detail]}">{label}</a></{tag}>'
    title = f' title="{_e(detail)}"' if detail else ""
    return f'<{tag} class="{css}"{title}>{label}</{tag}>'


def _excerpts(
    findings: Sequence[Finding], root: Path, link: Callable[[str, int], str]
) -> list[str]:
    """The code around each finding (the first :data:`MAX_EXCERPTS`), its line marked. The
    message is in the finding's row, which the excerpt links back to."""
    if not findings:
        return []
    out = ['<h2 id="code">Code</h2>']
    if len(findings) > MAX_EXCERPTS:
        out.append(f"<p>The first {MAX_EXCERPTS} findings; the others link to their file.</p>")
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
            f'<div class="excerpt" id="finding-{i}"><p><a href="#row-{i}" class="'
            f'{_e(f.severity.value)}">{_e(f.code)}</a> <a class="source" href="'
            f'{_e(link(f.path, f.line))}"><code>{_e(f.path)}:{f.line}</code></a> '
            f"<code>{_w(f.symbol, '.')}</code></p>"
        )
        if lines is None:
            out.append("<p><em>the file could not be read when the report was made</em></p>")
        else:
            first, last = max(1, f.line - CONTEXT), min(len(lines), f.line + CONTEXT)
            body = "".join(
                f'<span class="hit">{n:>5}  {_e(lines[n - 1].expandtabs(4))}</span>'
                if n == f.line else f"{n:>5}  {_e(lines[n - 1].expandtabs(4))}\n"
                for n in range(first, last + 1)
            )
            out.append(f"<pre><code>{body}</code></pre>")
        out.append("</div>")
    return out
