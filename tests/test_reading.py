"""Reading the built site in headless Chromium, on a phone and a desktop, light and dark: the
reading path, diagrams opened full screen, wide tables and long output, the language switch,
the skip link and the Chinese 404 page."""

from __future__ import annotations

import pytest
from helpers import PHONE, load, open_language_menu_and_pick

# The words of the code in a table's cells that a line break splits.
WORDS_ON_TWO_LINES = """t => [...t.querySelectorAll('td code')].flatMap(code => {
    const walker = document.createTreeWalker(code, NodeFilter.SHOW_TEXT), out = [];
    while (walker.nextNode()) {
        const text = walker.currentNode;
        let at = 0;
        for (const word of text.data.split(' ')) {
            const range = document.createRange();
            range.setStart(text, at);
            range.setEnd(text, at + word.length);
            const lines = new Set([...range.getClientRects()].map(r => Math.round(r.top)));
            if (word.length > 1 && lines.size > 1) out.push(word);
            at += word.length + 1;
        }
    }
    return out; })"""
DESKTOP = {"width": 1280, "height": 800}


@pytest.fixture
def phone(browser):
    context = browser.new_context(viewport=PHONE, color_scheme="dark")
    yield context.new_page()
    context.close()


@pytest.mark.parametrize("prefix", ["", "zh/"])
def test_the_reading_path_is_on_the_home_pages_first_screen_and_next_follows_it(site, phone, prefix):
    load(phone, site.url + prefix)
    link = phone.locator("article .admonition a[href='path/']").first
    box = link.bounding_box()
    assert box and box["y"] + box["height"] <= PHONE["height"], box  # seen without scrolling
    with phone.expect_navigation():
        link.click()
    stops = phone.locator("article ol > li > strong > a")
    assert stops.count() >= 8
    hrefs = stops.evaluate_all("els => els.map(a => a.getAttribute('href'))")
    assert "../perf/memory-coalescing/" in hrefs
    assert phone.get_attribute("link[rel=next]", "href") == hrefs[0]  # the path page's Next is its first stop
    # On a stop: its place on the path, and Next (the footer's and the `n` key's) is the next stop.
    load(phone, site.url + prefix + "perf/memory-coalescing/")
    marker = phone.locator("nav.gg-path")
    assert marker.locator(".gg-path__next").get_attribute("href") == "../occupancy/"
    assert phone.get_attribute("link[rel=next]", "href") == "../occupancy/"
    assert phone.get_attribute("link[rel=prev]", "href") == "../../device-software/shared-memory/"
    assert phone.locator(".md-footer__link--next").get_attribute("href") == "../occupancy/"


@pytest.mark.parametrize("scheme, viewport", [("dark", PHONE), ("light", DESKTOP)])
def test_a_diagram_opens_full_screen_zoomed_and_escape_closes_it(site, browser, scheme, viewport):
    context = browser.new_context(viewport=viewport, color_scheme=scheme)
    tab = context.new_page()
    load(tab, site.url + "host-software/nvidia-gpu-drivers/")
    diagram = tab.locator("article img.gg-zoomable:visible").first
    shown_src = diagram.get_attribute("src")
    assert shown_src.endswith(".dark.svg#only-dark" if scheme == "dark" else ".svg#only-light")
    alt = diagram.get_attribute("alt")
    if viewport is PHONE:
        diagram.focus()
        tab.keyboard.press("Enter")
    else:
        diagram.click()
    dialog = tab.locator("dialog.gg-zoom[open]")
    dialog.wait_for()
    picture = dialog.locator("img.gg-zoom__image")
    assert picture.get_attribute("src").endswith(shown_src.rsplit("/", 1)[-1]) and picture.get_attribute("alt") == alt
    tab.wait_for_function("() => document.querySelector('dialog.gg-zoom').dataset.ggScale !== ''")
    scale = float(dialog.get_attribute("data-gg-scale"))
    width = picture.bounding_box()["width"]
    if viewport is PHONE:  # drawn size: wider than the screen, labels as large as their author drew them
        assert scale == 1 and width > PHONE["width"]
    else:  # fitted to the screen
        assert 0.75 <= scale <= 2 and width <= DESKTOP["width"]
    tab.locator("[data-gg-zoom=in]").click()
    assert float(dialog.get_attribute("data-gg-scale")) == pytest.approx(scale * 1.5, rel=0.01)
    tab.keyboard.press("Escape")
    tab.locator("dialog.gg-zoom").wait_for(state="hidden")
    assert diagram.evaluate("el => el === document.activeElement")  # focus returns to the diagram
    context.close()


def test_a_wide_table_shows_it_scrolls_and_breaks_error_messages_only_between_words(site, phone):
    load(phone, site.url + "zh/host-software/nvidia-gpu-drivers/")
    table = phone.locator("article table").filter(has=phone.locator("code", has_text="CUDA driver is a stub library"))
    box = table.locator("xpath=ancestor::*[@data-gg-scroll-box][1]")
    box.scroll_into_view_if_needed()
    assert box.evaluate("el => el.scrollWidth > el.clientWidth")
    assert box.get_attribute("data-gg-more-right") is not None and box.get_attribute("data-gg-more-left") is None
    box.evaluate("el => { el.scrollLeft = el.scrollWidth; }")
    phone.wait_for_function(
        "el => el.hasAttribute('data-gg-more-left') && !el.hasAttribute('data-gg-more-right')", arg=box.element_handle()
    )
    # Each word of each error message in the table sits on one line.
    broken = table.evaluate(WORDS_ON_TWO_LINES)
    assert table.locator("td code").count() >= 10
    assert broken == []


def test_long_output_lines_wrap_on_request_and_the_copy_button_covers_no_text(site, phone):
    load(phone, site.url + "host-software/nvidia-smi/")
    pre = phone.locator("article .highlight pre").filter(has_text="CUDA Version:").first
    pre.scroll_into_view_if_needed()
    code = pre.locator("code")
    wrap = pre.locator("button.gg-wrap")
    wrap.wait_for()
    assert code.evaluate("el => el.scrollWidth > el.clientWidth")  # the key value sits off screen
    wrap.click()
    assert wrap.get_attribute("aria-pressed") == "true"
    assert code.evaluate("el => el.scrollWidth <= el.clientWidth + 1")
    # The text keeps clear of the buttons over its first line.
    clearance = code.evaluate("el => parseFloat(getComputedStyle(el).paddingRight)")
    buttons = pre.evaluate("""p => { const r = p.getBoundingClientRect();
        return Math.max(...[...p.querySelectorAll('.md-clipboard, .gg-wrap')]
            .map(b => r.right - b.getBoundingClientRect().left)); }""")
    assert clearance >= buttons - 1


def test_the_language_switch_keeps_the_section_being_read(site, browser):
    context = browser.new_context(viewport=DESKTOP)
    tab = context.new_page()
    load(tab, site.url + "device-software/warp/")
    tab.evaluate("document.getElementById('divergence').scrollIntoView({behavior: 'instant'})")
    # Material's navigation.tracking writes the section into the address (a navigation of the page
    # itself): let it settle, so that the navigation waited for below is the switch's.
    tab.wait_for_function("() => location.hash === '#divergence'")
    open_language_menu_and_pick(tab, "zh", url=site.url + "zh/device-software/warp/#divergence")
    assert tab.url == site.url + "zh/device-software/warp/#divergence"
    top = tab.evaluate("document.getElementById('divergence').getBoundingClientRect().top")
    assert 0 <= top < 200
    context.close()


def test_skip_to_content_lands_on_the_title_before_the_definition(site, phone):
    load(phone, site.url + "device-software/warp/")
    phone.keyboard.press("Tab")
    assert phone.evaluate("document.activeElement.classList.contains('md-skip')")
    phone.keyboard.press("Enter")
    assert phone.evaluate("document.activeElement.tagName") == "H1"


def test_the_chinese_404_keeps_the_mistyped_address_and_offers_a_search(site, phone):
    english_404 = (site.dir / "404.html").read_text(encoding="utf-8")
    assert english_404.index('"zh/404.html"') < english_404.index("<body")  # sent on before anything is drawn
    phone.goto(site.url + "zh/device-software/wrap/")
    phone.locator("[data-gg-missing]").wait_for()
    assert phone.url == site.url + "zh/device-software/wrap/"
    assert phone.inner_text("h1") == "页面不存在"
    assert phone.inner_text("[data-gg-missing]") == "/zh/device-software/wrap/"
    search = phone.locator("a[data-gg-search-missing]")
    assert "wrap" in search.inner_text() and search.get_attribute("href").endswith("?q=wrap")
