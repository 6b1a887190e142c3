"""The engines every simulator runs on (``engine="native"`` or ``"reference"``): their names,
once. A module of its own, so that the command line lists them without importing numpy."""

ENGINES = ("native", "reference")
