"""The `plan` command line: the only code that imports typer and rich."""

import time

# When the command line was first imported. `plan solve`'s time limit bounds the whole
# command, so it counts from here: importing the planner (OR-Tools, numpy, pydantic) takes
# 1-2 s on a busy 2-core machine. Handed to one command only, by the console entry point
# (planner.cli.app.main), not to commands a test runs in a long-lived process.
IMPORTED = time.perf_counter()
