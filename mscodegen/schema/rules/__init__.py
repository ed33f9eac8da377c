"""Rules that tie config sections together, and checks against the file system.

Each rule returns problems as (key path, message) so that the error points at the key to change, with
its line in the YAML file. Each rule names the sections it reads: when a section fails the schema, the
rules that do not read it still run (every problem at once). The rules live by concern: training,
data, network, tables (CSV sources; registered on import) and modules (the file system and the user's
own modules).
"""

from mscodegen.schema.rules import data, distill, gan, heads, network, tables, training  # noqa: F401  (registers their rules)
from mscodegen.schema.rules._registry import GAN_SECTIONS, SECTIONS, cross_section_problems
from mscodegen.schema.rules.modules import file_problems, identifier_problems, weight_file_problems

__all__ = [
    "GAN_SECTIONS",
    "SECTIONS",
    "cross_section_problems",
    "file_problems",
    "identifier_problems",
    "weight_file_problems",
]
