"""The CP-SAT encoding: variables, constraints (one method per concern), objective, model."""
