"""Schemas of gpuplan's inputs (pydantic v2, frozen) and their loading."""
