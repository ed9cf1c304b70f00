"""GPU Glossary: the tools behind the bilingual glossary (checker, site plugin, build, translator)."""

__version__ = "0.1.0"
