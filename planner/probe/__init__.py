"""Measurements on the local accelerator (`plan probe`): readings, benchmarks, calibration.

Parsing and verdicts are pure and tested on recorded outputs; running a probe needs the
optional extra `gpuplan[probe]` (torch, transformers, peft) and, for the card probe, an
NVIDIA GPU with nvidia-smi.
"""
