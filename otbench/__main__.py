"""``python -m otbench COMMAND ...``: the ``otbench`` command (see :mod:`otbench.console`)."""

from otbench.console import main

main()
