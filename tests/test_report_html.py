"""``hookguard report --html``: one self-contained page, checked as text and in a real browser
(the system's headless Chromium, driven by Playwright through ``executable_path``)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import GitRepo, load_fixture_builder

build = load_fixture_builder()

M3 = "trtllm_mini/attention_backend/sparse/minimax_m3/cache_manager.py"
# CI sets this: there the browser test must run, never skip.
REQUIRED = os.environ.get("HOOKGUARD_REQUIRE_BROWSER") == "1"


def chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


def report(cwd: Path, out: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hookguard", "report", "--html", str(out),
                           "--no-cache", *args], cwd=cwd, capture_output=True, text=True,
                          check=False)


@pytest.fixture(scope="module")
def page_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("html")
    repo = build.build_kvcache_repo(base / "kv")
    out = base / "artifacts" / "report.html"
    out.parent.mkdir()
    proc = report(repo, out)
    assert proc.returncode == 1, proc.stderr  # error-level findings, as audit
    assert f"hookguard: wrote {out}" in proc.stderr
    return out


def test_page_is_self_contained(page_file: Path) -> None:
    text = page_file.read_text()
    assert text.startswith("<!DOCTYPE html>")
    # Nothing that a browser would fetch: no external scripts, styles, images, fonts, frames.
    assert not re.search(r"<(script|img|iframe|link|embed|object|source)[^>]*\b(src|href)=",
                         text, re.IGNORECASE)
    assert "@import" not in text and "url(" not in text
    assert "default-src 'none'" in text
    # The findings, linked to their code on the page.
    assert text.count('<tr class="finding"') == 3
    assert f'<a class="location" href="#finding-1"><code>{M3}:68</code></a>' in text
    assert '<div class="excerpt" id="finding-1">' in text
    assert "def _build_pool_mapping_tensors(self)" in text
    # The family's hook map marks the dead override, and lists the removed hook's.
    assert "trtllm_mini.pyexecutor.kv_cache_manager_v2.KVCacheManagerV2" in text
    assert ">dead override<br><small>defines _build_pool_mapping_tensors (line 68)</small>" in (
        text)
    assert "DeepseekV4CacheManager._on_pool_resize" in text and "was removed" in text


def test_hostile_names_are_escaped(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "r")
    evil = "<script>alert(1)<\x2fscript>\x1b.py"
    repo.commit("add", {evil: "class A:\n    def f(self):\n        self.g(1)\n\n"
                              "    def g(self, x): ...\n\n\nclass B(A):\n    def g(self): ...\n"})
    out = tmp_path / "report.html"
    proc = report(repo.root, out)
    assert proc.returncode == 1, proc.stderr
    text = out.read_text()
    assert "<script>alert" not in text and "&lt;script&gt;alert(1)&lt;/script&gt;\\x1b.py" in text
    assert text.count("<script>") == 1  # ours


def test_input_problems_say_whether_the_file_was_analysed(tmp_path: Path) -> None:
    """A file whose base class does not resolve was analysed; one that does not parse was not
    (the page called both "not analysed"; issue 26, item 9)."""
    repo = GitRepo(tmp_path / "r")
    repo.commit("add", {"pkg/__init__.py": "", "pkg/broken.py": "def f(:\n",
                        "pkg/c.py": "from pkg.missing import Gone\n\n\nclass C(Gone):\n"
                                    "    def f(self):\n        pass\n"})
    out = tmp_path / "report.html"
    proc = report(repo.root, out)
    assert proc.returncode == 1, proc.stderr  # the file not analysed fails the run
    text = out.read_text()
    assert "Files not analysed" not in text
    assert '<h2 id="input-problems">Input problems (2)</h2>' in text
    assert "1 file not analysed (the run fails), 1 other input problem in files that were " \
        "analysed" in text
    rows = re.findall(r'<tr class="input-problem">.*?</tr>', text)
    assert len(rows) == 2
    (unresolved,) = [r for r in rows if "pkg/c.py:4" in r]
    assert '<td class="analysed">analysed</td>' in unresolved
    assert "cannot resolve base class" in unresolved
    (broken,) = [r for r in rows if "pkg/broken.py:1" in r]
    assert '<td class="error">not analysed</td>' in broken and "syntax error" in broken


def test_unwritable_target_is_a_usage_error(tmp_path: Path) -> None:
    proc = report(tmp_path, tmp_path / "missing" / "r.html")
    assert proc.returncode == 2 and "cannot write the report" in proc.stderr


@pytest.mark.skipif(not REQUIRED and chromium() is None,
                    reason="no chromium on this machine (CI installs Debian's chromium)")
def test_page_in_a_real_browser(page_file: Path) -> None:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        if REQUIRED:
            raise
        pytest.skip("the playwright package is not installed (CI installs it)")
    executable = chromium()
    assert executable is not None, "HOOKGUARD_REQUIRE_BROWSER=1 but chromium is not installed"
    requests: list[str] = []
    console_errors: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        try:
            page = browser.new_page()
            page.on("console", lambda m: console_errors.append(m.text)
                    if m.type == "error" else None)
            page.on("pageerror", lambda e: console_errors.append(str(e)))

            def route(r: object) -> None:
                request = r.request  # type: ignore[attr-defined]
                requests.append(request.url)
                if request.url.startswith("file://"):
                    r.continue_()  # type: ignore[attr-defined]
                else:
                    r.abort()  # type: ignore[attr-defined]

            page.route("**/*", route)
            page.goto(page_file.as_uri())
            assert page.title() == "hookguard report: 3 errors"
            # Nothing fetched: the page itself is the only request.
            assert requests == [page_file.as_uri()]
            rows = page.locator("#findings tbody tr")
            assert rows.count() == 3 and all(rows.nth(i).is_visible() for i in range(3))
            # The filter box works.
            page.fill("#filter", "HG002")
            assert page.locator("#shown").inner_text() == "1"
            assert [rows.nth(i).is_visible() for i in range(3)] == [False, False, True]
            page.fill("#filter", "")
            assert page.locator("#shown").inner_text() == "3"
            # A finding's link goes to its code on the page.
            page.click(f"a.location:has-text('{M3}:68')")
            assert page.url.endswith("#finding-1")
            excerpt = page.locator("#finding-1")
            assert excerpt.is_visible() and "_build_pool_mapping_tensors" in excerpt.inner_text()
            # The hook map shows the dead override in the M3 row.
            m3_row = page.locator("table.hookmap tr", has_text="MiniMaxM3KVCacheManagerV2")
            assert m3_row.locator("td.stale").inner_text().startswith("dead override")
            # The excerpt's own link opens the file in the checkout.
            href = excerpt.locator("a.source").get_attribute("href")
            assert href is not None and href.startswith("../kv/") and href.endswith("#L68")
            excerpt.locator("a.source").click()
            page.wait_for_load_state()
            assert page.url.split("#")[0].endswith(M3)
            assert "class MiniMaxM3KVCacheManagerV2" in page.content()
            assert all(url.startswith("file://") for url in requests), requests
        finally:
            browser.close()
    assert console_errors == []


def test_links_go_to_github_in_actions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from hookguard.report.html import code_link_base

    root = tmp_path / "checkout"
    monkeypatch.delenv("GITHUB_SHA", raising=False)
    local = code_link_base(root, tmp_path / "out" / "report.html")
    assert local("pkg/a b.py", 7) == "../checkout/pkg/a%20b.py#L7"
    monkeypatch.setenv("GITHUB_SERVER_URL", "https://github.com")
    monkeypatch.setenv("GITHUB_REPOSITORY", "org/repo")
    monkeypatch.setenv("GITHUB_SHA", "0123abc")
    github = code_link_base(root, tmp_path / "out" / "report.html")
    assert github("pkg/a b.py", 7) == "https://github.com/org/repo/blob/0123abc/pkg/a%20b.py#L7"
