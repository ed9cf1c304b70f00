"""What the theme overrides read as `gg`: language links, notices, edit and report links."""

from __future__ import annotations

import posixpath
from typing import Any
from urllib.parse import urlencode, urljoin

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.pages import Page as MkDocsPage

from gpu_glossary.glossary import LANGUAGE_NAMES, LANGUAGES, SOURCE_LANG, url_prefix
from gpu_glossary.site.i18n import strings
from gpu_glossary.site.llms import twin_url


def template_data(
    config: MkDocsConfig, lang: str, root_site_url: str, base_url: str, url: str | None, status: str | None
) -> dict[str, Any]:
    """Links to this page in every language, and the notices, for the theme overrides."""
    site_root = base_url if lang == SOURCE_LANG else posixpath.join(base_url, "..")
    # Material keeps the colour scheme per scope; one scope for both languages keeps it.
    config.extra["scope"] = site_root.rstrip("/") + "/"
    alternates = []
    for other in LANGUAGES:
        path = url_prefix(other) + (url or "")
        alternates.append(
            {
                "lang": other,
                "name": LANGUAGE_NAMES[other],
                "href": posixpath.join(site_root, path) if path else site_root.rstrip("/") + "/",
                "absolute": (root_site_url + path) if root_site_url else "",
                "current": other == lang,
            }
        )
    english = next(a for a in alternates if a["lang"] == SOURCE_LANG)
    return {
        "lang": lang,
        "t": strings(lang),
        "status": status,
        "alternates": alternates,
        "is_page": url is not None,
        "english_href": english["href"],
        "markdown_href": twin_url(url).rsplit("/", 1)[-1] if url is not None else None,
    }


def report_url(config: MkDocsConfig, lang: str, page: MkDocsPage) -> str | None:
    """A new issue from the 'Error in a page' form, naming this page and language."""
    if not config.repo_url:
        return None
    address = (config.site_url or "") + page.url
    query = urlencode(
        {
            "template": "page-error.yml",
            "title": f"[Page]: {page.title}",
            "page": address,
            "language": LANGUAGE_NAMES[lang],
        }
    )
    return urljoin(config.repo_url.rstrip("/") + "/", f"issues/new?{query}")


def edit_url(config: MkDocsConfig, branch: str, lang: str, rel: str) -> str | None:
    """The repository's edit page for a file, if the site names its repository."""
    if not config.repo_url:
        return None
    return urljoin(config.repo_url.rstrip("/") + "/", f"edit/{branch}/glossary/{lang}/{rel}")
