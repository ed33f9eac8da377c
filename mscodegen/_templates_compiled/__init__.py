"""Precompiled templates (see mscodegen/render.py); written by `python -m mscodegen.render`."""
