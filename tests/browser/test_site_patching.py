"""The patching explorer on the built ablation page: it names the corrupted prompt it runs, and a press
on a cell of its grid picks that cell."""


def test_a_press_on_a_cell_of_the_patching_grid_picks_it(visit, site_url):
    v = visit(f"{site_url}/chapters/part1/ablation.html")
    v.page.wait_for_function("() => window.courseExplorers && window.courseExplorers.ready")
    explorer = v.page.locator(".course-explorer.course-live").filter(
        has=v.page.locator('[data-choose^="cell="]')).first
    labels = "(el) => [...el.querySelectorAll('svg')].map((s) => s.getAttribute('aria-label')).join(' ')"
    assert "corrupted run: <BOS> Pietro chiama Paolo Tarso" in explorer.inner_text() or \
        "(a legal round of the game)" in explorer.evaluate(labels)
    explorer.locator('[data-choose="cell=MLP1&position=7"]').first.click()
    # A menu's value is its option's place; its text is the row's name.
    v.page.wait_for_function("(el) => { const s = el.querySelector('select[data-control=cell]'); "
                             "return s.options[s.selectedIndex].textContent === 'MLP1' && "
                             "el.querySelector('input[data-control=position]').value === '7'; }",
                             arg=explorer.element_handle())
    v.page.wait_for_function("(el) => [...el.querySelectorAll('svg')].some((s) => "
                             "(s.getAttribute('aria-label') || '').includes('MLP1 at position 7'))",
                             arg=explorer.element_handle())
    assert "(a legal round of the game)" in explorer.evaluate(labels)
    assert (v.console_errors, v.outside, v.failed) == ([], [], []), (v.console_errors, v.outside, v.failed)
