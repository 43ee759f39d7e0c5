"""The domain search tools: opaque names, one generic description, and true descriptions as gold.

Every domain tool runs the same whole-corpus search and then keeps only its domain's pages, so
it may return fewer than ``k`` results or none (as in the paper). ``domains+all`` adds a tool
that keeps every page. Names are shuffled with a fixed seed so their order says nothing.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from otbench.envs.browsecomp import defaults
from otbench.envs.browsecomp.domains import DOMAINS, OTHER
from otbench.envs.browsecomp.render import Document
from otbench.envs.browsecomp.retrieval import Retriever
from otbench.modules.tool_docs import DocumentedTool, ParameterSpec

"""BrowseComp's settings: the ten domain tools, or those and a whole-corpus search; the one toolset every
question shares is named after its setting."""
ALL = "all"

GENERIC_DESCRIPTION = "Searches a collection of web pages. Returns up to 5 results."
ANSWER_TOOL = "final_answer"

_GOLD = {
    "wikipedia": "Wikipedia articles: biographies of people, including where and when they were born.",
    "academic": "Academic pages (university sites, arXiv, ResearchGate): universities and where they are, "
                "papers and their authors, which university a person graduated from.",
    "news": "News sites: real news articles and reports of company acquisitions (who acquired whom).",
    "entertainment": "Entertainment databases (IMDb, Rotten Tomatoes): films, their directors and "
                     "production companies, TV series.",
    "reference": "Reference works (Britannica, WorldAtlas, dictionaries): cities, the country they lie in and "
                 "their main airport's IATA code; countries and their capitals.",
    "government": "Government sites (.gov): government agencies, who heads them and where they have their seat; "
                  "trademark records.",
    "business": "Business directories (Crunchbase, Forbes): companies, their founders, headquarters and "
                "founding year.",
    "sports": "Sports sites (ESPN): football clubs, their home city, captain and founding year; racehorses.",
    "history": "History sites: treaties, where and in which year they were signed; historic ships.",
    OTHER: "Pages of no listed category (blogs, fan forums): for example football club supporters' pages "
           "about club mascots.",
    ALL: "Every page of the collection, whatever its site.",
}
_SUFFIX = " Searches the whole collection, then keeps only these pages: returns up to 5 results, possibly none."


def tool_domains(setting: str) -> tuple[str, ...]:
    """The domains a setting's tools search, in the fixed order of :data:`DOMAINS` (``all`` last)."""
    return (*DOMAINS, ALL) if setting == "domains+all" else DOMAINS


def tool_names(setting: str) -> dict[str, str]:
    """Opaque name -> domain: ``search_1`` ... in a seeded order, independent of the domain list."""
    domains = list(tool_domains(setting))
    random.Random(6).shuffle(domains)
    return {f"search_{i + 1}": domain for i, domain in enumerate(domains)}


def documented_tools(setting: str, *, gold: bool) -> list[DocumentedTool]:
    query = ParameterSpec("query", "string")
    tools = []
    for name, domain in tool_names(setting).items():
        description = f"{_GOLD[domain]}{_SUFFIX if domain != ALL else ' Returns up to 5 results.'}" if gold \
            else GENERIC_DESCRIPTION
        tools.append(DocumentedTool(
            name, description=description, parameters=[query],
            parameter_descriptions={"query": "words to search for"} if gold else {},
            returns="a list of results with url, title and the start of the page text" if gold else ""))
    return sorted(tools, key=lambda tool: int(tool.name.split("_")[1]))


def answer_tool() -> DocumentedTool:
    """The fixed tool the agent answers with; never part of the toolbox, so never edited."""
    return DocumentedTool(ANSWER_TOOL, description="Give your final, short answer to the question. Ends the task.",
                          parameters=[ParameterSpec("answer", "string")],
                          parameter_descriptions={"answer": "the answer only, as short as possible"})


@dataclass(frozen=True)
class SearchResult:
    doc_id: str
    url: str
    title: str
    snippet: str

    def to_dict(self) -> dict[str, str]:
        return {"url": self.url, "title": self.title, "snippet": self.snippet}


class Searcher:
    """Runs a domain tool: whole-corpus search to ``depth``, domain filter, first ``k``, truncated snippets."""

    def __init__(self, retriever: Retriever, documents: list[Document], *, k: int = defaults.K,
                 depth: int = defaults.DEPTH, snippet_chars: int = defaults.SNIPPET_CHARS) -> None:
        self.retriever = retriever
        self.documents = documents
        self.domains = [doc.domain for doc in documents]
        self.k, self.depth, self.snippet_chars = k, depth, snippet_chars

    def search(self, query: str, domain: str) -> list[SearchResult]:
        results = []
        for position in self.retriever.search(query, self.depth):
            if domain == ALL or self.domains[position] == domain:
                doc = self.documents[position]
                snippet = doc.text if len(doc.text) <= self.snippet_chars else doc.text[: self.snippet_chars] + "..."
                results.append(SearchResult(doc.id, doc.url, doc.title, snippet))
                if len(results) == self.k:
                    break
        return results
