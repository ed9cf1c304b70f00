"""The files a language's build has beyond its own folder.

Images live once in `glossary/images/` for both languages; an English page with no Chinese
translation yet is built in its place on the Chinese site; the A–Z index and terminology
table and the reading path are generated for each language.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files, InclusionLevel

from gpu_glossary.glossary import SOURCE_LANG, Glossary
from gpu_glossary.images.names import IMAGE_EXTENSIONS
from gpu_glossary.site.generated_pages import index_page, terminology_page
from gpu_glossary.site.reading_path import PATH_PAGE, path_page
from gpu_glossary.terminology import Terminology


@dataclass
class ExtraFiles:
    untranslated: set[str] = field(default_factory=set)  # rels built from the English page
    generated: dict[str, str] = field(default_factory=dict)  # rel -> generated Markdown


def add_extra_files(
    files: Files, config: MkDocsConfig, glossary: Glossary, lang: str, terminology: Terminology, path_stops: list[str]
) -> ExtraFiles:
    images = glossary.images_dir
    for image in sorted(images.rglob("*")) if images.is_dir() else []:
        if image.is_file() and image.suffix.lower() in IMAGE_EXTENSIONS:  # not PALETTE.md
            src_uri = "images/" + image.relative_to(images).as_posix()
            files.append(File(src_uri, str(glossary.glossary_dir), config.site_dir, config.use_directory_urls))
    extra = ExtraFiles()
    if lang != SOURCE_LANG:
        for rel, english in glossary.pages[SOURCE_LANG].items():
            if glossary.page(lang, rel) is None:
                files.append(File.generated(config, rel, content=english.text, inclusion=InclusionLevel.INCLUDED))
                extra.untranslated.add(rel)
    extra.generated = {
        "terms.md": index_page(glossary, lang),
        "terminology.md": terminology_page(terminology, lang, glossary),
        PATH_PAGE: path_page(glossary, lang, path_stops),
    }
    for rel, content in extra.generated.items():
        files.append(File.generated(config, rel, content=content))
    return extra
