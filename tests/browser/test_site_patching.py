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


def test_the_patching_grid_is_a_grid_the_keyboard_moves_through(visit, site_url):
    """Every cell is reachable and operable by keyboard (issue 49): the grid is one Tab stop (a roving tabindex),
    the arrow keys move between its cells with the focus shown, and Enter picks the focused cell."""
    v = visit(f"{site_url}/chapters/part1/ablation.html")
    v.page.wait_for_function("() => window.courseExplorers && window.courseExplorers.ready")
    explorer = v.page.locator(".course-explorer.course-live").filter(
        has=v.page.locator('[data-choose^="cell="]')).first
    grid = explorer.locator('[role="grid"]').first
    cells = grid.locator('[role="gridcell"]')
    assert cells.count() >= 200 and grid.locator('[role="row"]').count() >= 10
    assert grid.locator('[role="gridcell"][tabindex="0"]').count() == 1          # one Tab stop for the whole grid
    assert cells.count() - 1 == grid.locator('[role="gridcell"][tabindex="-1"]').count()
    start = grid.locator('[role="gridcell"][tabindex="0"]')
    start.focus()
    row, col = int(start.get_attribute("data-row")), int(start.get_attribute("data-col"))
    v.page.keyboard.press("ArrowLeft")         # the cell picked at the start is at the last position
    v.page.keyboard.press("ArrowDown")
    focused = v.page.evaluate("() => [document.activeElement.getAttribute('data-row'), document.activeElement.getAttribute('data-col'),"
                              " document.activeElement.getAttribute('tabindex'), document.activeElement.getAttribute('data-choose')]")
    assert (int(focused[0]), int(focused[1]), focused[2]) == (row + 1, col - 1, "0"), focused
    assert grid.locator('[role="gridcell"][tabindex="0"]').count() == 1
    # The focus is shown: the focused cell's square is outlined thick.
    assert v.page.evaluate("() => getComputedStyle(document.activeElement.querySelector('rect')).strokeWidth") == "3px"
    v.page.keyboard.press("Home")
    assert v.page.evaluate("() => document.activeElement.getAttribute('data-col')") == "0"
    v.page.keyboard.press("Enter")
    cell, position = focused[3].replace("cell=", "").split("&position=")
    v.page.wait_for_function("([el, cell]) => { const s = el.querySelector('select[data-control=cell]'); "
                             "return s.options[s.selectedIndex].textContent === cell && "
                             "el.querySelector('input[data-control=position]').value === '0'; }",
                             arg=[explorer.element_handle(), cell])
    assert (v.console_errors, v.outside, v.failed) == ([], [], []), (v.console_errors, v.outside, v.failed)
