"""The documentation's shape and its links: README.md, the pages in docs/ and each environment's README.

- Every relative link in those files points at a file or folder that exists, and a ``#anchor`` on a
  link to a markdown file (or to a heading of the same file) names one of that file's headings, by
  GitHub's slug rules: the heading's text without markup, lowercased, punctuation other than
  hyphens, underscores and spaces dropped, each space turned into a hyphen, and ``-1``, ``-2``...
  added to repeats. Links with a scheme (``https:``, ``mailto:``) are not followed.
- README.md is the front page: at most 170 lines, with the quick start (``make demo`` and
  ``make test``) within its first 50 lines.
- Every page in docs/ is reachable from README.md.

Links and headings inside fenced code blocks and inline code are not links or headings.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
README_MAX_LINES = 170
QUICK_START_WITHIN = 50

FENCE = re.compile(r"^\s*(`{3,}(?=[^`]*$)|~{3,})")  # an opening backtick fence has no backtick after it
INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1")
INLINE_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE_LINK = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+\"[^\"]*\")?\s*$")
ATX_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
HTML_ANCHOR = re.compile(r"<a\s[^>]*(?:name|id)=\"([^\"]+)\"")
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def _documents() -> list[Path]:
    return [README, *sorted((ROOT / "docs").glob("*.md")), *sorted(ROOT.glob("environments/*/README.md"))]


def _prose_lines(text: str) -> list[str]:
    """The file's lines with fenced code blocks blanked, so their contents are neither links nor headings."""
    lines, fence = [], None
    for line in text.splitlines():
        match = FENCE.match(line)
        if fence is None and match:
            fence = match.group(1)
            lines.append("")
        elif fence is not None:
            if match and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence):
                fence = None
            lines.append("")
        else:
            lines.append(line)
    return lines


def slug(heading: str) -> str:
    """GitHub's anchor for a heading's text."""
    parts = re.split(r"(`+[^`]*`+)", heading)  # code spans keep their text; HTML tags elsewhere go
    text = "".join(
        part.strip("`") if part.startswith("`") else re.sub(r"<[^>]+>", "", part) for part in parts
    )
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text).strip().lower()  # a link keeps its text
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    found: set[str] = set()
    seen: dict[str, int] = {}
    for line in _prose_lines(path.read_text(encoding="utf-8")):
        found.update(HTML_ANCHOR.findall(line))
        match = ATX_HEADING.match(line)
        if not match:
            continue
        base = slug(match.group(2))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def links(path: Path) -> list[tuple[int, str]]:
    """(line number, target) of every inline and reference link outside code."""
    out = []
    for number, line in enumerate(_prose_lines(path.read_text(encoding="utf-8")), start=1):
        prose = INLINE_CODE.sub("", line)
        out.extend((number, target) for target in INLINE_LINK.findall(prose))
        reference = REFERENCE_LINK.match(prose)
        if reference:
            out.append((number, reference.group(1)))
    return out


def _resolve(source: Path, target: str) -> tuple[Path, str]:
    """The file a relative link points at (the source itself for a bare ``#anchor``) and its anchor."""
    location, _, anchor = target.partition("#")
    location = location.split("?", 1)[0]
    resolved = (source.parent / unquote(location)).resolve() if location else source
    return resolved, unquote(anchor)


def test_slug_follows_github():
    assert slug("Training and evaluating with prime-rl") == "training-and-evaluating-with-prime-rl"
    assert slug("Episode contract (version 6)") == "episode-contract-version-6"
    assert slug("Guided prompts (`guide`)") == "guided-prompts-guide"
    assert slug("Served = local") == "served--local"
    assert slug("What `make ci` runs") == "what-make-ci-runs"
    assert slug("Graded policies (`baseline/noisy-<p>`)") == "graded-policies-baselinenoisy-p"
    assert slug("Rung <em>one</em>") == "rung-one"


@pytest.mark.parametrize("document", _documents(), ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(document: Path):
    broken = []
    for number, target in links(document):
        if not target or SCHEME.match(target):
            continue
        resolved, anchor = _resolve(document, target)
        where = f"{document.relative_to(ROOT)}:{number}: {target}"
        if not resolved.exists():
            broken.append(f"{where} (no such file)")
        elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
            broken.append(f"{where} (no heading #{anchor} in {resolved.relative_to(ROOT)})")
    assert not broken, "broken links:\n" + "\n".join(broken)


def test_readme_is_short_with_the_quick_start_first():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines (at most {README_MAX_LINES})"
    head = lines[:QUICK_START_WITHIN]
    assert "## Quick start" in head, f"no '## Quick start' in README.md's first {QUICK_START_WITHIN} lines"
    for command in ("make demo", "make test"):
        assert any(line.startswith(command + " ") or line == command for line in head), (
            f"`{command}` is not in README.md's first {QUICK_START_WITHIN} lines"
        )


def test_every_docs_page_is_linked_from_the_readme():
    linked = {_resolve(README, target)[0] for _, target in links(README) if not SCHEME.match(target)}
    pages = sorted((ROOT / "docs").glob("*.md"))
    assert pages, "docs/ has no pages"
    missing = [str(page.relative_to(ROOT)) for page in pages if page.resolve() not in linked]
    assert not missing, f"docs pages README.md does not link: {missing}"
