import pytest

from otbench.envs.browsecomp.domains import DOMAINS, domain_of
from otbench.envs.browsecomp.render import _EVIDENCE_URLS, _NAMESAKES, Document
from otbench.envs.browsecomp.retrieval import open_retriever
from otbench.envs.browsecomp.tools import ALL, GENERIC_DESCRIPTION, Searcher, documented_tools, tool_names


def test_urls_fall_into_the_papers_categories():
    assert domain_of("https://en.wikipedia.org/wiki/Lyon") == "wikipedia"
    assert domain_of("https://www.harvard.edu/about") == "academic"
    assert domain_of("http://abcnews.go.com/Politics/story?id=1") == "news"
    assert domain_of("https://www.federalregister.gov/agencies/x") == "government"
    assert domain_of("https://www.archives.gov/x") == "government"  # first matching category wins
    assert domain_of("https://someone.blogspot.com/p/x.html") == "other"
    assert domain_of("https://example.org") == "other"


def test_every_generated_url_pattern_lands_in_its_intended_domain():
    for (domain, _kind), pattern in _EVIDENCE_URLS.items():
        assert domain_of(pattern.format(s="some-name", n=12345678)) == domain
    for domain, (_role, pattern) in _NAMESAKES.items():
        assert domain_of(pattern.format(s="some-name", n=12345678)) == domain


def test_tools_are_opaque_in_the_base_setting_and_documented_in_gold():
    base, gold = documented_tools("domains", gold=False), documented_tools("domains", gold=True)
    assert [t.name for t in base] == [f"search_{i}" for i in range(1, 11)]
    assert {t.description for t in base} == {GENERIC_DESCRIPTION}
    assert len({t.description for t in gold}) == 10
    assert set(tool_names("domains").values()) == set(DOMAINS)
    assert set(tool_names("domains+all").values()) == {*DOMAINS, ALL}
    assert tool_names("domains+all") != dict(zip(tool_names("domains+all"), (*DOMAINS, ALL)))  # order hides nothing


DOCS = [
    Document("d0", "https://en.wikipedia.org/wiki/Ada_Quill", "Ada Quill", "Ada Quill was born in Lyon in 1950."),
    Document("d1", "https://www.espn.com/horse-racing/horse/_/id/1/ada-quill", "Ada Quill (a racehorse)",
             "Ada Quill is a racehorse. Ada Quill was born in Porto."),
    Document("d2", "https://forum-1.boards.net/thread/ada-quill", "Ada Quill (a fan forum thread)",
             "Ada Quill born Ada Quill born."),
    Document("d3", "https://www.britannica.com/place/lyon", "Lyon", "Lyon is a city in France. " + "x" * 400),
    Document("d4", "https://www.crunchbase.com/organization/acme", "Acme", "Acme makes anvils."),
]


@pytest.mark.parametrize("kind", ["bm25", "dense"])
def test_domain_tools_search_everything_then_keep_their_domain(kind, tmp_path):
    searcher = Searcher(open_retriever(kind, DOCS, tmp_path, "f1"), DOCS, k=2, depth=5, snippet_chars=40)
    assert [r.doc_id for r in searcher.search("Ada Quill born", "wikipedia")] == ["d0"]
    everything = searcher.search("Ada Quill born", ALL)
    assert len(everything) == 2 and len({domain_of(r.url) for r in everything}) == 2  # any domain goes
    assert searcher.search("Ada Quill born", "history") == []  # a domain may have nothing
    lyon = searcher.search("Lyon city France", "reference")[0]
    assert lyon.snippet.endswith("...") and len(lyon.snippet) == 43


def test_indexes_are_cached_and_rebuilt_when_the_corpus_changes(tmp_path):
    open_retriever("bm25", DOCS, tmp_path, "f1")
    marker = tmp_path / "bm25" / "fingerprint"
    built = marker.stat().st_mtime_ns
    reused = open_retriever("bm25", DOCS, tmp_path, "f1")
    assert marker.stat().st_mtime_ns == built and reused.search("anvils", 5) == [4]
    smaller = open_retriever("bm25", DOCS[:2], tmp_path, "f2")
    assert marker.read_text() == "f2" and smaller.search("anvils", 5) == []
