"""The suite's own arrangement (tests/conftest.py): tiers by folder, the longest files handed out first."""
from pathlib import Path

from tests import conftest  # the root one (tests/browser has a conftest of its own)

TESTS = Path(__file__).resolve().parent


def test_every_tier_folder_and_named_test_exists():
    for folder in conftest.FOLDER_MARKERS:
        assert (TESTS / folder).is_dir(), folder
    for name in conftest.BY_NAME:
        path, test = name.split("::")
        assert f"def {test}(" in (TESTS / path).read_text(), name


def test_the_longest_first_are_test_files_named_once():
    names = conftest.LONGEST_FIRST
    assert len(names) == len(set(names))
    missing = [n for n in names if not (TESTS / n).is_file()]
    assert not missing, f"renamed or removed: update LONGEST_FIRST in tests/conftest.py: {missing}"


def test_collection_puts_them_first_and_keeps_each_files_order():
    class Item:
        def __init__(self, path, name):
            self.path, self.name, self.markers = TESTS / path, name, []

        def add_marker(self, marker):
            self.markers.append(marker)

    first, second = conftest.LONGEST_FIRST[:2]
    items = [Item("test_layout.py", "a"), Item(second, "b1"), Item(first, "c"), Item(second, "b2"),
             Item("test_kept.py", "d")]
    conftest.pytest_collection_modifyitems(None, items)
    assert [i.name for i in items] == ["c", "b1", "b2", "a", "d"]
    assert items[0].markers == [conftest.FOLDER_MARKERS[first.split("/")[0]]]
