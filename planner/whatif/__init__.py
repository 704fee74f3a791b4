"""What-if variants of a scenario: shorthand flags, each turned into a patch over the file."""
