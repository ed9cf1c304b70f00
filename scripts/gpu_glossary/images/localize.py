"""`gpu-glossary images --localize`: copy remote images into glossary/images/ and link them locally.

Hot-linked images break (referrer checks, blocked hosts in China, dead links) and leak
readers' visits to a third party. Each remote image is fetched once, with a timeout, a size
limit and a content-type check, saved under a name derived from its content (so nothing is
ever overwritten), and the page is rewritten to point at the copy.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import urlsplit

import httpx

from gpu_glossary.atomic import write_text_atomic
from gpu_glossary.glossary import Glossary
from gpu_glossary.images.links import IMAGES, Change, content_name, find_images, relative_link
from gpu_glossary.images.svg_check import svg_problems
from gpu_glossary.page import Problem

EXTENSIONS = {
    "image/svg+xml": ".svg",
    "image/png": ".png",
    "image/jpeg": ".jpg",
    "image/gif": ".gif",
    "image/webp": ".webp",
}


class FetchError(Exception):
    pass


@dataclass
class Localizer:
    glossary: Glossary
    timeout: float = 10.0
    max_bytes: int = 5 * 1024 * 1024
    fetched: dict[str, str] = field(default_factory=dict)  # url -> file name

    def fetch(self, url: str) -> str:
        """Download one image (once per run) and return its file name in glossary/images/."""
        if url in self.fetched:
            return self.fetched[url]
        try:
            with httpx.stream("GET", url, timeout=self.timeout, follow_redirects=True) as response:
                if response.status_code != 200:
                    raise FetchError(f"HTTP {response.status_code}")
                kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
                if kind not in EXTENSIONS:
                    raise FetchError(f"content type '{kind or 'none'}' is not an image type ({', '.join(EXTENSIONS)})")
                declared = int(response.headers.get("content-length") or 0)
                if declared > self.max_bytes:
                    raise FetchError(f"{declared:,} bytes is over the {self.max_bytes:,}-byte limit")
                data = bytearray()
                for chunk in response.iter_bytes():
                    data.extend(chunk)
                    if len(data) > self.max_bytes:
                        raise FetchError(f"more than the {self.max_bytes:,}-byte limit")
        except httpx.TimeoutException:
            raise FetchError(f"timed out after {self.timeout:g} s") from None
        except httpx.HTTPError as error:
            raise FetchError(f"{type(error).__name__}: {error}") from None
        unsafe = svg_problems(bytes(data)) if kind == "image/svg+xml" else []
        if unsafe:
            line, message = unsafe[0]
            raise FetchError(f"the SVG is not safe to serve (line {line}: {message})")
        name = content_name(bytes(data), EXTENSIONS[kind])
        target = self.glossary.images_dir / name
        if not target.exists():  # same name means same bytes: never overwrite anything
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(bytes(data))
        self.fetched[url] = name
        return name

    def localize(self) -> tuple[list[Change], list[Problem]]:
        changes: list[Change] = []
        problems: list[Problem] = []
        for pages in self.glossary.pages.values():
            for page in pages.values():
                lines = page.text.replace("\r\n", "\n").split("\n")
                page_changes = []
                for ref in sorted(find_images(page), key=lambda r: (r.line, -r.start)):
                    if not ref.is_remote:
                        continue
                    url = "https:" + ref.target if ref.target.startswith("//") else ref.target
                    parts = urlsplit(url)
                    try:
                        name = self.fetch(parts._replace(fragment="").geturl())
                    except FetchError as error:
                        problems.append(page.problem(ref.line, f"cannot copy remote image '{ref.target}': {error}"))
                        continue
                    local = relative_link(page.rel, f"{IMAGES}/{name}") + (
                        f"#{parts.fragment}" if parts.fragment else ""
                    )
                    line = lines[ref.line - 1]
                    lines[ref.line - 1] = line[: ref.start] + local + line[ref.end :]
                    page_changes.append(Change(page.display_path, ref.line, ref.target, local))
                if page_changes:
                    write_text_atomic(page.path, "\n".join(lines))
                    changes.extend(page_changes)
        return changes, problems
