"""mscodegen: one YAML file -> two readable MindSpore training scripts with identical losses."""

__version__ = "0.1.0"
