"""Runnable examples: what they are, their recorded runs, running them on a GPU, charts from runs."""
