"""The version matrix (`make compat`): the generated scripts on every MindSpore release PyPI has for this Python.

For each version: one virtual environment (built with uv when it is installed, else pip; reused when
it holds that MindSpore), then `mscodegen parity --python <env>/bin/python` on each example: the
generator runs here, the scripts (and msrun, and the weights check) there. Then each version's
per-step logs and final weights are compared with the reference version's (2.10.0, the dev pin).

Modules: _envs (versions, requirements, building), _runs (the examples, one parity run each),
_compare (logs against the reference: ulps, final weights), _page (the Markdown), __main__ (the CLI, whose
--help gives examples). Nothing here imports MindSpore: _weights is run by an environment's interpreter.
"""
