"""The `plan` command line: the only code that imports typer and rich."""
