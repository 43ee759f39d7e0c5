"""A run's life: what defines it, how it executes, where it is stored, how it is found again and kept.

A run (an evaluation or an optimization) is one value, :class:`otbench.run.definition.RunDefinition`;
everything here takes it: execution (:mod:`otbench.run.evaluation`, :mod:`otbench.run.optimization`),
tracking in MLflow (:mod:`otbench.run.tracking`, with its checkpoints, names, provenance and views), lookup of a
finished run (:mod:`otbench.run.lookup`) and the committed results ledger (:mod:`otbench.run.ledger`). The store
itself is opened below, by :mod:`otbench.mlflow_store`. Nothing here imports a command.
"""
