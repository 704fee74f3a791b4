"""What-if: patch a scenario, solve both sides, and say what the change costs or saves.

`shorthand` turns a flag (`--price`, `--commit`, ...) into a patch computed from the
scenario; `compare` and `report` set two checked plans side by side.
"""
