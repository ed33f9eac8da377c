"""Refresh the tables mscodegen ships in `mscodegen/catalog/data/` from the installed MindSpore and mindcv.

The generator and `validate` never import MindSpore (about a second), so what they check a config
against (the dataset ops a pipeline may name, `mindspore.nn`'s losses, mindcv's model names) is read from
tables written here, by introspection, when MindSpore or mindcv is upgraded:

    python -m mscodegen.tools.catalog            # all three
    python -m mscodegen.tools.catalog ops --print  # one, to stdout (the tests compare it with the shipped file)

Modules: `signatures` (a class's `__init__` parameters and their docstring types; `dumps`, the JSON layout of
both tables), `ops`, `losses`, `mindcv` (one table each). This is the only code in mscodegen, besides the run tools, that imports them.
"""
