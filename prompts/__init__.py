"""Prompt files the model sees, shipped as package data (read with importlib.resources)."""
