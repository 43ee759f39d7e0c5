"""Work over several runs: comparisons of rows with intervals and paired tests, the paper's grid, sweeps.

Built on :mod:`otbench.run`: a study plans the runs it needs by their definitions, reuses the finished
ones (from the local store or the results ledger) and runs the missing ones. Nothing here imports a command.
"""
