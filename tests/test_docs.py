"""The documentation: a short README whose relative links resolve, and docs/ pages of a readable length."""

from __future__ import annotations

import re

import pytest

from conftest import ROOT

README_MOST_LINES = 250
PAGE_MOST_LINES = 600
LINK = re.compile(r"\]\(([^)\s]+)\)")  # the target of a Markdown link [text](target)


def relative_links(text: str) -> list[str]:
    """The link targets of a Markdown text that are paths (no scheme such as https:), without an anchor."""
    return [target.split("#")[0] for target in LINK.findall(text) if ":" not in target and target.split("#")[0]]


@pytest.mark.parametrize("name", ["README.md", "CHANGES.md"])
def test_relative_links_resolve(name: str) -> None:
    """Every relative link of the README and the changelog names a file or folder of the checkout."""
    links = relative_links((ROOT / name).read_text())
    assert [link for link in links if not (ROOT / link).exists()] == []


def test_readme_is_short() -> None:
    """The README is a user's page; the long material lives in docs/."""
    assert len((ROOT / "README.md").read_text().splitlines()) <= README_MOST_LINES


def test_no_page_of_the_docs_is_too_long() -> None:
    """Each page of docs/ keeps to one concern, at most PAGE_MOST_LINES lines."""
    lengths = {page.name: len(page.read_text().splitlines()) for page in (ROOT / "docs").glob("*.md")}
    assert lengths and {name: n for name, n in lengths.items() if n > PAGE_MOST_LINES} == {}
