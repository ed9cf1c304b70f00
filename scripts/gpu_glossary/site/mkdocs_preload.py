"""What every `mkdocs build` of ours loads, loaded once: imported by the fork server that
`build.py` starts its build processes from (see `build_process_context`). A process forked
from it starts with MkDocs, Material, pymdownx and our plugin in memory, so a build, a
rebuild of the live preview or a build in the tests does not import them again
(benchmarks/README.md has what that saves).
"""

import material.plugins.search.plugin  # noqa: F401
import mkdocs.__main__  # noqa: F401  the command line, and with it MkDocs itself
import pymdownx.arithmatex  # noqa: F401
import pymdownx.highlight  # noqa: F401
import pymdownx.superfences  # noqa: F401

import gpu_glossary.highlight  # noqa: F401
import gpu_glossary.site.plugin  # noqa: F401
