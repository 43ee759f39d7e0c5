"""Any MCP server as an environment: its tools are the toolset, your task file the tasks.

``--env mcp`` connects to a server over stdio (``--mcp "COMMAND ARGS"``) or streamable HTTP
(``--mcp-url URL``), lists its tools and shows them to the agent as the setting says: as the server
advertises them (``base``), under opaque names (``names_only``, ``names_params``) or with true docs
written from the server's source (``gold``). Every call the agent makes goes to the server; what comes
back is untrusted data, read as such (:mod:`.replies`). Four third-party servers from PyPI are shipped
with fixtures, task files and gold docs (``--mcp-server time|sqlite|git|calculator``, :mod:`.servers`).

- :mod:`.launch`: where a server is reached (a command line or a URL);
- :mod:`.connection`: one session with a server, its timeouts, crashes and restarts;
- :mod:`.replies`: a tool's result read as an output or an error, bounded;
- :mod:`.shown`: the server's tools as the agent sees them in each setting;
- :mod:`.tasks`, :mod:`.metrics`: the task file and how an attempt is scored;
- :mod:`.env`: :class:`~otbench.envs.mcp.env.MCPEnvironment`;
- :mod:`.proxy`: a server that advertises learned docs and forwards every call (``otbench serve-docs``).

This package imports nothing heavy: the command line lists its settings at once.
"""

from __future__ import annotations

SETTINGS = ("base", "names_only", "names_params", "gold")
"""``base``: the server's own names, descriptions and schemas; ``names_only``: opaque names alone;
``names_params``: opaque names and the input schemas without their descriptions; ``gold``: the server's
names with true docs (``--gold-docs``)."""
DEFAULT_TIMEOUT = 30.0
"""Seconds a tool call may take before it fails and the server is restarted (the environment's and the proxy's)."""
