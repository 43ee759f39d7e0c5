"""URL categories of the domain tools, decided by substrings of a document's URL.

The paper splits its corpus by URL substrings into nine categories plus ``other`` (a URL that
matches none). Rules are checked in the order of :data:`DOMAINS`, so a URL matching two
categories belongs to the first; every generated URL is built to match exactly the category it
is meant for (a test checks that).
"""

from __future__ import annotations

from urllib.parse import urlsplit

DOMAIN_RULES: dict[str, tuple[str, ...]] = {
    "wikipedia": ("wikipedia.org",),
    "academic": (".edu/", "arxiv.org", "researchgate.net", "scholar."),
    "news": ("aljazeera.com", "tass.com", "abcnews.", "rte.ie", "huffingtonpost.", "dw.com", "chinadaily.",
             "bbc.co.uk", "cnn.com", "reuters.com", "apnews.com"),
    "entertainment": ("imdb.com", "rottentomatoes.com", "billboard.com"),
    "reference": ("britannica.com", "worldatlas.com", "dictionary."),
    "government": (".gov/", ".gov.", "europa.eu"),
    "business": ("crunchbase.com", "bloomberg.com", "forbes.com"),
    "sports": ("espn.com", "transfermarkt.", "olympics.com"),
    "history": ("history.com", "historynet.com", "archives."),
}
OTHER = "other"
DOMAINS: tuple[str, ...] = (*DOMAIN_RULES, OTHER)


def domain_of(url: str) -> str:
    """The category of ``url``: the first rule a substring of its host and path matches, else ``other``."""
    parts = urlsplit(url.lower())
    where = f"{parts.netloc}{parts.path}"
    if not where.endswith("/"):
        where += "/"
    for domain, needles in DOMAIN_RULES.items():
        if any(needle in where for needle in needles):
            return domain
    return OTHER
