"""What every `mkdocs build` of ours loads, loaded once: imported by the fork server that
`build.py` starts its build processes from (see `build_process_context`).

Started as `python -m mkdocs build`, a build spent about half a second importing MkDocs,
Material, pymdownx and our plugin, and a Chinese build another 1.2 s loading jieba's
dictionary: more than building a small project, paid again on every rebuild of the live
preview and on every build in the tests. A process forked from one that did it already
starts with all of it in memory.
"""

import logging

import jieba
import material.plugins.search.plugin  # noqa: F401
import mkdocs.__main__  # noqa: F401  the command line, and with it MkDocs itself
import pymdownx.arithmatex  # noqa: F401
import pymdownx.highlight  # noqa: F401
import pymdownx.superfences  # noqa: F401

import gpu_glossary.site.plugin  # noqa: F401

jieba.setLogLevel(logging.WARNING)  # its "Building prefix dict…" lines are not build output
jieba.initialize()
