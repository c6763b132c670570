"""Recorded API conversations (vcrpy cassettes), shipped as package data."""
