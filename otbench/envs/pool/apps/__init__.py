"""The pool's tools, by theme; each module lists its tools as :class:`~otbench.envs.pool.spec.ToolSpec` values in
``TOOLS``, grouped into apps (ToolGym's servers). Functions check their arguments with BFCL's checks, so a bad
call fails with an error that names the parameter, never the tool."""
