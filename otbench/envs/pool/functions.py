"""Every pool tool's function by true name, the registry the sandbox's worker processes import
(``otbench.envs.pool.functions:FUNCTIONS``): a call runs there under the name the agent used, bounded in CPU time,
memory and output size like BFCL's and Wild's calls."""

from otbench.envs.pool.catalogue import functions

FUNCTIONS = functions()
REGISTRY = "otbench.envs.pool.functions:FUNCTIONS"
