"""Renderers: each turns a result into text for one audience. Rules never print."""
